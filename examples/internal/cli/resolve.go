package cli

import "github.com/gortapi/gortapi/rtapi"

// Resolve returns the instance and shared-memory group o names, resolved
// as rtapi.Open resolves them (a flag, else $RTAPI_INSTANCE and
// $RTAPI_SHM_GROUP, else the defaults), for a program that talks to a
// host of that instance without running a task: halcmd, halweb, halrun
// -U. It opens and closes an RT of the posix flavor to do so.
func Resolve(o rtapi.Options) (instance int, group string, err error) {
	o.Flavor, o.LockMemory = "posix", rtapi.Off
	rt, err := rtapi.Open(o)
	if err != nil {
		return 0, "", err
	}
	return rt.Instance(), rt.ShmGroup(), rt.Close()
}
