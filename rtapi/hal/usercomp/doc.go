// Package usercomp is the user-space side of a HAL host: a program that
// runs as its own process (LinuxCNC's loadusr programs: an HMI, a
// fieldbus bridge) makes a component with pins and parameters in a
// running host, marks it ready and reads and writes its pins at its own
// pace, as LinuxCNC's hal_init, hal_pin_*_new and hal_ready or Python's
// hal.component do:
//
//	c, err := usercomp.New("panel", usercomp.Options{}) // the host from the environment
//	c.NewPin("jog", hal.TypeFloat, hal.Out)              // panel.jog
//	c.NewPin("pos", hal.TypeFloat, hal.In)
//	c.Ready()
//	c.Set("jog", "2.5")
//	pos, err := c.Get("pos")
//
// Every request goes through the host's control socket (package halctl),
// under its one who-may rule, on the connection New opened: the
// component is that connection's. When the connection ends, by Close or
// because the process exits or dies (kill -9), the host removes the
// component and its pins (their signals stay), as LinuxCNC does; the
// host's threads never wait on a user component.
//
// Loader runs halcmd's loadusr, waitusr and unloadusr for halrun and
// halcmd: it starts programs with the host's instance and socket in
// their environment (Env), so that New finds the host with no flags.
package usercomp
