package reader

// TestLinksTwice is testLinksTwice, for the tests of package reader_test.
var TestLinksTwice = &testLinksTwice
