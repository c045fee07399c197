package backend

// FlavorOf returns the flavor that runs an *rtapi.RT's tasks, or an error
// matching ErrClosed once the RT is closed. Package rtapi sets it in an
// init function, so that rtapi/sim reaches the sim engine as a driver
// would, without a public method on RT; nothing else calls it.
var FlavorOf func(rt any) (Flavor, error)
