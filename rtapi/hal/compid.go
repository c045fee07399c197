package hal

// Component ids (show's Owner and ID columns) are given as LinuxCNC's
// uspace build gives them: every rtapi_init, in any process, takes the
// next number of one counter shared by the session (uspace_common.h), and
// hal_init's comp_id is that number. The ids a session spends are
// modelled, not counted: halrun's start takes 1 to 3 (rtapi_app's
// HAL_LIB, halcmd's HAL_LIB_pid and its halcmd<pid> component); each
// loadrt takes 2 for its "rtapi_app load" client, then 1 for each
// hal_init of the module; a thread takes 1 for its "__thread" pseudo
// component; a user component (loadusr) takes 1 for its process's
// hal_lib_init and 1 for hal_init. docs/LINUXCNC.md says where this can
// differ from a LinuxCNC session (programs that call rtapi_init more
// often, halcmd run more than once).

const (
	startIDs  = 3 // ids LinuxCNC's halrun has spent before the first command
	loadrtIDs = 2 // ids of a loadrt's rtapi_app client, before its module's hal_init
	userIDs   = 1 // a user process's hal_lib_init, before its hal_init
)

// nextCompID spends n ids and returns the last: the id of a component
// made now when n is 1. Called with h.mu.
func (h *HAL) nextCompID(n int) int {
	if h.lastID == 0 {
		h.lastID = startIDs
	}
	h.lastID += n
	return h.lastID
}
