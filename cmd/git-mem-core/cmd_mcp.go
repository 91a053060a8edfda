package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gitmem/git-mem/mcpserver"
)

func init() { register(newMCPCmd) }

func newMCPCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the memory to an agent over the Model Context Protocol (stdio)",
		Long: "Run an MCP server on stdin/stdout with the tools search, show, log and context.\n" +
			"Claude Code (~/.claude.json or .mcp.json):\n" +
			"  {\"mcpServers\": {\"git-mem\": {\"command\": \"git-mem\", \"args\": [\"mcp\"]}}}\n" +
			"Codex (~/.codex/config.toml):\n" +
			"  [mcp_servers.git-mem]\n  command = \"git-mem\"\n  args = [\"mcp\"]",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.open()
			if err != nil {
				return err
			}
			srv := mcpserver.New(m, versionString())
			err = srv.Run(e.ctx, mcpserver.StdioTransport())
			if err != nil && !errors.Is(err, e.ctx.Err()) {
				return fmt.Errorf("mcp server: %w", err)
			}
			return nil
		},
	}
}
