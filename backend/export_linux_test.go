package backend

// PidsRoot exposes pidsRoot to the tests of package backend_test.
var PidsRoot = pidsRoot
