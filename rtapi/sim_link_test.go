package rtapi_test

// The sim flavor is registered by package rtapi/sim, which a program that
// opens Flavor "sim" imports. This package's tests import it here, once:
// the in-package tests (package rtapi, which cannot import rtapi/sim
// without a cycle) are linked into the same test binary and open "sim"
// too.
import _ "github.com/gortapi/gortapi/rtapi/sim"
