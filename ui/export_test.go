package ui

// BrowserCommands exposes the $BROWSER parsing to the tests.
var BrowserCommands = browserCommands
