#!/usr/bin/env python3
"""Writes testdata/bench/supersede: eight simulated weeks of one developer's
sessions on one project (issue 20). Four rules are said once in week one
and asked about in week eight, under repeated noise and unrelated later
updates; eight settings change value over the weeks and are asked about
("what is it now?") in week eight. Deterministic: the same bytes every run.

The questions were written before any tuning and share no word with the
pipeline's change or recency signals (search/links.go changeWords,
memory/links.go recencyWords); eval_supersede_test.go checks that.

Usage: python3 scripts/gen_supersede_bench.py  (from the repository root)
"""
import json
import os
import random
from datetime import datetime, timedelta, timezone

OUT = os.path.join("testdata", "bench", "supersede")
rng = random.Random(20)
START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)  # a Monday
PROJECT = "atlas"

# Rules: said once (week 1), never repeated.
RULES = [
    ("rule-force-push", 0, 1,
     "House rule for this repo: never force-push to main. Rebase locally and open a pull request instead, even for a one-line fix.",
     "Understood: no force-pushes to main. I'll rebase locally and always go through a pull request.",
     ["Am I allowed to force push to the main branch?",
      "What is our policy on rewriting the history of main?",
      "Can I do git push --force on main after a rebase?",
      "Is overwriting main with a forced push acceptable here?",
      "How should a one-line fix reach the main branch?"]),
    ("rule-gofmt", 0, 2,
     "Before every commit, run gofmt and go vet on the whole module; CI rejects unformatted Go code.",
     "Noted. I'll run gofmt -l . and go vet ./... before each commit.",
     ["What checks must I run locally before committing Go code?",
      "Do I have to format the code before a commit?",
      "Which tools should pass before I commit?",
      "Will CI accept Go files that were not run through the formatter?",
      "What do I run on the module before each commit?"]),
    ("rule-deps", 0, 3,
     "Please don't add any new third-party dependencies to go.mod without asking me first; we keep the module lean.",
     "Got it: no new third-party modules without your approval first.",
     ["Can I pull in a new third-party package for parsing YAML?",
      "What is the rule about adding dependencies to go.mod?",
      "May I add an external module to the project on my own?",
      "Do new libraries need approval before they go into go.mod?",
      "Is it fine to add a dependency without checking with you?"]),
    ("rule-ticket", 0, 4,
     "Every commit message must reference the Jira ticket in square brackets, like [ATL-123], at the start of the subject.",
     "Will do: commit subjects start with the ticket, e.g. [ATL-123] Fix token refresh.",
     ["How should commit messages be written in this repo?",
      "What must the subject line of a commit mention?",
      "Where does the Jira key go in a commit?",
      "Is there a required format for commit subjects?",
      "What goes at the start of each commit subject?"]),
]

# Facts that change: (key, file, [(week, value, user text, assistant text)], questions)
FACTS = [
    ("port", "config/server.yaml", [
        (0, "8080", "Set the API server port in config/server.yaml to 8080 so it matches the load balancer listener.",
         "Set port: 8080 in config/server.yaml; the server starts and answers /health on :8080."),
        (3, "9090", "The load balancer team asked for a different listener: change the API server port in config/server.yaml to 9090 instead of 8080.",
         "Changed config/server.yaml to port: 9090 and restarted; /health answers on :9090."),
        (6, "8443", "We're terminating TLS in the server now, so the API port in config/server.yaml moves to 8443.",
         "Updated config/server.yaml: port: 8443, TLS cert paths added; curl -k https://localhost:8443/health is OK."),
    ], ["Which port does the API server listen on?",
        "What port should I curl to hit the API locally?",
        "On which TCP port is the atlas API served?"]),
    ("region", "deploy/staging.tf", [
        (1, "us-east-1", "Create the staging environment in deploy/staging.tf in region us-east-1, close to the payment provider.",
         "Wrote deploy/staging.tf with provider region = us-east-1; terraform plan shows 14 resources."),
        (4, "eu-west-2", "Compliance wants EU data residency: migrate the staging deploy in deploy/staging.tf from us-east-1 to eu-west-2, and the pipeline should push images built from main there instead.",
         "Moved deploy/staging.tf to region = eu-west-2 and pointed the image push step at the eu-west-2 registry; terraform apply finished."),
    ], ["Which AWS region hosts the staging environment?",
        "Where is staging deployed, region-wise?",
        "What region should the staging terraform target?"]),
    ("logger", "internal/log/log.go", [
        (0, "logrus", "Set up structured logging in internal/log/log.go with logrus and JSON output.",
         "internal/log/log.go now wraps logrus with the JSON formatter; log lines carry request_id."),
        (2, "zap", "logrus allocates too much in the hot path; replace it with zap in internal/log/log.go.",
         "internal/log/log.go now uses zap (zap.NewProduction); the benchmark shows 5x fewer allocations."),
        (5, "slog", "Go's standard library has a structured logger: switch internal/log/log.go from zap to log/slog and drop the zap dependency.",
         "internal/log/log.go is on log/slog with a JSON handler; zap removed from go.mod."),
    ], ["Which logging package does the service use?",
        "What library do we log with in internal/log?",
        "Which logger should new code import?"]),
    ("postgres", "docker-compose.yml", [
        (1, "postgres:14", "Add a database to docker-compose.yml: image postgres:14 with a named volume.",
         "docker-compose.yml has db: image: postgres:14, volume pgdata; docker compose up works."),
        (5, "postgres:16", "Production is on Postgres 16: bump docker-compose.yml from postgres:14 to postgres:16.",
         "docker-compose.yml now uses image: postgres:16; I dumped and restored the local data."),
    ], ["Which Postgres version runs in docker compose?",
        "What database image do we use for local development?",
        "Which version of the database should my local container run?"]),
    ("go", "go.mod", [
        (0, "1.22", "Initialise the module: go.mod with go 1.22, module github.com/acme/atlas.",
         "Created go.mod: module github.com/acme/atlas, go 1.22."),
        (4, "1.24", "We need the new iterator helpers: raise go.mod from go 1.22 to go 1.24.",
         "go.mod says go 1.24 now; go build ./... and the tests pass with the 1.24 toolchain."),
    ], ["Which Go version is the module on?",
        "What toolchain version does go.mod require?",
        "Which release of Go do I need to build atlas?"]),
    ("timeout", "internal/client/client.go", [
        (2, "5s", "Give the HTTP client in internal/client/client.go a timeout of 5s.",
         "internal/client/client.go: http.Client{Timeout: 5 * time.Second}."),
        (6, "30s", "Report exports take longer than 5s; the timeout in internal/client/client.go should be 30s instead.",
         "internal/client/client.go: Timeout: 30 * time.Second; the export job completes."),
    ], ["How long does the HTTP client wait before giving up?",
        "What timeout is configured on the outbound client?",
        "After how many seconds does a request from internal/client abort?"]),
    ("runner", ".github/workflows/ci.yml", [
        (1, "ubuntu-22.04", "Set up CI in .github/workflows/ci.yml on runs-on: ubuntu-22.04 with go test and go vet.",
         "Added .github/workflows/ci.yml: runs-on: ubuntu-22.04, steps checkout, setup-go, go vet, go test."),
        (5, "ubuntu-24.04", "GitHub is retiring the old image: move .github/workflows/ci.yml from ubuntu-22.04 to ubuntu-24.04.",
         "ci.yml now says runs-on: ubuntu-24.04; the pipeline is green."),
    ], ["Which runner image does CI use?",
        "What operating system do the workflow jobs run on?",
        "Which Ubuntu release are the CI builds executed on?"]),
    ("ttl", "config/cache.yaml", [
        (3, "60s", "Add a response cache in config/cache.yaml with ttl: 60s for the catalog endpoint.",
         "config/cache.yaml: catalog: ttl: 60s; hit rate 71% in the load test."),
        (7, "300s", "The catalog barely changes; raise the cache ttl in config/cache.yaml from 60s to 300s.",
         "config/cache.yaml: catalog ttl: 300s; hit rate up to 94%."),
    ], ["How long are catalog responses cached?",
        "What is the cache lifetime for the catalog endpoint?",
        "For how many seconds does the catalog cache keep an entry?"]),
]

# Restatements: later exchanges that mention a fact's value in passing
# (not changes): they must not supersede anything.
MENTIONS = {
    "port": "curl localhost:{v}/health returns 503 after the deploy; check the server log.",
    "region": "terraform plan for staging in {v} shows drift on the security group.",
    "logger": "The request_id field is missing from some {v} log lines in internal/log/log.go.",
    "go": "go vet with go {v} reports a loopclosure warning in internal/client/client.go.",
}

NOISE = [
    ("run the tests again", "All {n} tests pass (go test ./... took {s}s)."),
    ("push the feature branch to origin", "Pushed feature/{b} to origin; the PR checks are running."),
    ("pull main and rebase my branch on it", "Rebased feature/{b} onto origin/main; no conflicts."),
    ("the flaky test TestRetry in internal/client/client_test.go failed again, rerun it", "Reran TestRetry: passed on attempt {k}."),
    ("go vet complains about a printf verb in cmd/atlas/main.go, fix it", "Changed %d to %s for the name argument in cmd/atlas/main.go; go vet is clean."),
    ("run go mod tidy and check go.sum", "go mod tidy removed {k} unused entries from go.sum."),
    ("what's in the git status right now", "Two modified files (internal/api/handler.go, internal/api/handler_test.go) and one untracked file."),
    ("write a unit test for the pagination helper in internal/api/page.go", "Added TestPage with {k} table cases in internal/api/page_test.go; all pass."),
    ("review the diff before I commit", "The diff touches {k} files; one leftover debug print in internal/api/handler.go."),
    ("the build is slow, profile it", "Most of the {s}s goes to compiling the generated protobuf package."),
]

# Unrelated updates with change words and shared vocabulary.
UNRELATED = [
    (4, "Release process update: we no longer ship on the Friday release train; releases go out on Tuesday mornings instead.",
     "Noted the Tuesday release schedule in docs/RELEASING.md."),
    (5, "From now on the nightly job pushes the docs site from main to the gh-pages branch automatically, replacing the manual step.",
     "Added .github/workflows/docs.yml: on schedule, builds docs from main and pushes gh-pages."),
    (6, "We switched the team chat from Slack to Zulip; post deploy notices in the #atlas stream.",
     "Updated the deploy notifier webhook to the Zulip #atlas stream."),
]


def main():
    exchanges, queries, links = [], [], []
    seq = [0]

    def add(week, day, text_user, text_assistant, eid=None, files=()):
        t = START + timedelta(weeks=week, days=day, minutes=7 * seq[0] % 480)
        seq[0] += 1
        sid = f"atlas-w{week + 1}d{day + 1}"
        eid = eid or f"{sid}/{seq[0]}"
        turns = [{"role": "user", "text": text_user}]
        for f in files:
            turns.append({"role": "tool", "name": "Edit", "input": {"file_path": f}, "text": "ok"})
        turns.append({"role": "assistant", "text": text_assistant})
        exchanges.append({"id": eid, "session": sid, "time": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "project": PROJECT, "agent": "claude-code", "turns": turns})
        return eid

    fact_ids = {}
    plan = []  # (week, day, kind, payload)
    for name, week, day, u, a, _ in RULES:
        plan.append((week, day, "rule", (name, u, a)))
    for key, f, versions, _ in FACTS:
        for i, (week, v, u, a) in enumerate(versions):
            plan.append((week, 1 + (i + len(key)) % 4, "fact", (key, i, f, u, a)))
    for week, u, a in UNRELATED:
        plan.append((week, 2, "unrelated", (u, a)))
    for key, tmpl in MENTIONS.items():
        versions = [fx for fx in FACTS if fx[0] == key][0][2]
        for i, (week, v, _, _) in enumerate(versions):
            plan.append((min(week + 1, 7), 3, "mention", (key, tmpl.format(v=v))))
    for week in range(8):
        for day in range(5):
            for _ in range(rng.randint(3, 5)):
                u, a = NOISE[rng.randrange(len(NOISE))]
                plan.append((week, day, "noise", (u, a.format(n=rng.randint(120, 160), s=rng.randint(20, 90),
                                                            b=rng.choice(["auth", "export", "cache", "paging"]),
                                                            k=rng.randint(2, 9)))))
    plan.sort(key=lambda p: (p[0], p[1]))
    for week, day, kind, p in plan:
        if kind == "rule":
            name, u, a = p
            add(week, day, u, a, eid=f"atlas/{name}")
        elif kind == "fact":
            key, i, f, u, a = p
            fact_ids[(key, i)] = add(week, day, u, a, eid=f"atlas/{key}-v{i + 1}", files=[f])
        elif kind == "unrelated":
            u, a = p
            add(week, day, u, a)
        elif kind == "mention":
            key, u = p
            add(week, day, u, "Looking into it.")
        else:
            add(week, day, *p)

    n = 0
    for name, _, _, _, _, qs in RULES:
        for q in qs:
            n += 1
            queries.append({"qid": f"rule-{n}", "query": q, "category": "rule-recall", "relevant": [f"atlas/{name}"]})
    n = 0
    for key, f, versions, qs in FACTS:
        last = len(versions) - 1
        for i in range(1, len(versions)):
            links.append({"new": fact_ids[(key, i)], "old": fact_ids[(key, i - 1)]})
        for q in qs:
            n += 1
            queries.append({"qid": f"fact-{n}", "query": q, "category": "current-fact",
                            "relevant": [fact_ids[(key, last)]],
                            "stale": [fact_ids[(key, i)] for i in range(last)]})
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "exchanges.jsonl"), "w") as fh:
        for e in exchanges:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "queries.jsonl"), "w") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "links.json"), "w") as fh:
        json.dump({"supersedes": links, "rules": [f"atlas/{r[0]}" for r in RULES]}, fh, indent=1)
        fh.write("\n")
    print(len(exchanges), "exchanges,", len(queries), "queries,", len(links), "true links")


if __name__ == "__main__":
    main()
