package backend

// FlavorOf returns an *rtapi.RT's flavor (ErrClosed once closed). rtapi
// sets it at init for rtapi/sim, keeping it off RT's API.
var FlavorOf func(rt any) (Flavor, error)
