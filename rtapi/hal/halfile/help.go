package halfile

// Help is halcmd's "help" (do_help_cmd in LinuxCNC's halcmd_commands.cc):
// with cmd "" the list of commands, else cmd's text, else "No help for
// unknown command 'cmd'". The texts are LinuxCNC's byte for byte, so they
// name a few verbs gortapi refuses (debug, print);
// docs/LINUXCNC.md, "halcmd verbs", says which.
func Help(cmd string) string {
	if cmd == "" {
		return helpCommands
	}
	if t, ok := helpText[cmd]; ok {
		return t
	}
	return "No help for unknown command '" + cmd + "'\n"
}

// The texts below are copied from LinuxCNC's halcmd_commands.cc (do_help_cmd,
// print_help_commands), byte for byte.

// helpCommands is halcmd's "help" with no argument (print_help_commands).
const helpCommands = "Use 'help <command>' for more details about each command\nAvailable commands:\n  loadrt              Load realtime module(s)\n  loadusr             Start user space program\n  waitusr             Waits for userspace component to exit\n  unload              Unload realtime module or terminate userspace component\n  unloadrt            Unload realtime module \n  unloadusr           Unload userspace component\n  lock, unlock        Lock/unlock HAL behaviour\n  linkps              Link pin to signal (OBSOLETE)\n  linksp              Link signal to pin (OBSOLETE)\n  net                 Link a number of pins to a signal\n  unlinkp             Unlink pin\n  newsig              Create a signal (OBSOLETE)\n  delsig              Delete a signal\n  getp, gets          Get the value of a pin, parameter or signal\n  ptype, stype        Get the type of a pin, parameter or signal\n  setp, sets          Set the value of a pin, parameter or signal\n  addf, delf          Add/remove function to/from a thread\n  show                Display info about HAL objects\n  list                Display names of HAL objects\n  source              Execute commands from another .hal file\n  status              Display status information\n  debug               Set the rtapi message level\n  save                Print config as commands\n  start, stop         Start/stop realtime threads\n  alias, unalias      Add or remove pin or parameter name aliases\n  echo, unecho        Echo commands from stdin to stderr\n  print               print filename, line number and optional message to terminal\n  quit, exit          Exit from halcmd\n"

// helpText is halcmd's "help CMD" (do_help_cmd), by command.
var helpText = map[string]string{
	"help":      "If you need help to use 'help', then I can't help you.\n",
	"loadrt":    "loadrt modname [modarg(s)]\n  Loads realtime HAL module 'modname', passing 'modargs'\n  to the module.\n",
	"unload":    "unload compname\n  Unloads HAL module 'compname', whether user space or realtime.\n  If 'compname' is 'all', unloads all components.\n",
	"waitusr":   "waitusr compname\n  Waits for user space HAL module 'compname' to exit.\n",
	"unloadusr": "unloadusr compname\n  Unloads user space HAL module 'compname'.  If 'compname'\n  is 'all', unloads all userspace components.\n",
	"unloadrt":  "unloadrt modname\n  Unloads realtime HAL module 'modname'.  If 'modname'\n  is 'all', unloads all realtime modules.\n",
	"loadusr":   "loadusr [options] progname [progarg(s)]\n  Starts user space program 'progname', passing\n  'progargs' to it.  Options are:\n  -W  wait for HAL component to become ready\n  -Wn NAME  wait for component named NAME to become ready\n  -w  wait for program to finish\n  -i  ignore program return value (use with -w)\n",
	"linksp":    "linkps pinname [arrow] signame\nlinksp signame [arrow] pinname\n  Links pin 'pinname' to signal 'signame'.  Both forms do\n  the same thing.  Use whichever makes sense.  The optional\n  'arrow' can be '==>', '<==', or '<=>' and is ignored.  It\n  can be used in files to show the direction of data flow,\n  but don't use arrows on the command line.\n",
	"linkps":    "linkps pinname [arrow] signame\nlinksp signame [arrow] pinname\n  Links pin 'pinname' to signal 'signame'.  Both forms do\n  the same thing.  Use whichever makes sense.  The optional\n  'arrow' can be '==>', '<==', or '<=>' and is ignored.  It\n  can be used in files to show the direction of data flow,\n  but don't use arrows on the command line.\n",
	"net":       "net signame pinname ...\nCreates 'signame' with the type of 'pinname' if it does not yet exist\nAnd then links signame to each pinname specified.\n",
	"unlinkp":   "unlinkp pinname\n  Unlinks pin 'pinname' if it is linked to any signal.\n",
	"lock":      "lock [all|tune|none]\n  Locks HAL to some degree.\n  none - no locking done.\n  tune - some tuning is possible (setp & such).\n  all  - HAL completely locked.\n",
	"unlock":    "unlock [all|tune]\n  Unlocks HAL to some degree.\n  tune - some tuning is possible (setp & such).\n  all  - HAL completely unlocked.\n",
	"newsig":    "newsig signame type\n  Creates a new signal called 'signame'.  Type\n  is 'bit', 'float', 'port', 'u32', or 's32'.\n",
	"delsig":    "delsig signame\n  Deletes signal 'signame'.  If 'signame is 'all',\n  deletes all signals\n",
	"setp":      "setp paramname value\nsetp pinname value\nparamname = value\n  Sets parameter 'paramname' to 'value' (if writable).\n  Sets pin 'pinname' to 'value' (if an unconnected input).\n  'setp' and '=' work the same, don't use '=' on the\n  command line.  'value' may be a constant such as 1.234\n  or TRUE, or a reference to an environment variable,\n  using the syntax '$name'.  If option -i was given,\n  'value' may also be a reference to an ini file entry\n  using the syntax '[section]name'.\n",
	"sets":      "sets signame value\n  Sets a non-port signal 'signame' to 'value' (if signal has no writers).\n  If 'signame' is a port signal (that has not previously been allocated),\n  then 'value' is the new maximum size in bytes of that port.\n",
	"getp":      "getp paramname\ngetp pinname\n  Gets the value of parameter 'paramname' or pin 'pinname'.\n",
	"ptype":     "ptype paramname\nptype pinname\n  Gets the type of parameter 'paramname' or pin 'pinname'.\n",
	"gets":      "gets signame\n  Gets the value of signal 'signame'.\n  If signal 'signame' is a port, returns the buffer size of that port.\n",
	"stype":     "stype signame\n  Gets the type of signal 'signame'\n",
	"addf":      "addf functname threadname [position]\n  Adds function 'functname' to thread 'threadname'.  If\n  'position' is specified, adds the function to that spot\n  in the thread, otherwise adds it to the end.  Negative\n  'position' means position with respect to the end of the\n  thread.  For example '1' is start of thread, '-1' is the\n  end of the thread, '-3' is third from the end.\n",
	"delf":      "delf functname threadname\n  Removes function 'functname' from thread 'threadname'.\n",
	"show":      "show [type] [pattern]\n  Prints info about HAL items of the specified type.\n  'type' is 'comp', 'pin', 'sig', 'param', 'funct',\n  'thread', or 'all'.  If 'type' is omitted, it assumes\n  'all' with no pattern.  If 'pattern' is specified\n  it prints only those items whose names match the\n  pattern, which may be a 'shell glob'.\n",
	"list":      "list type [pattern]\n  Prints the names of HAL items of the specified type.\n  'type' is 'comp', 'pin', 'sig', 'param', 'funct', or\n  'thread'.  If 'pattern' is specified it prints only\n  those names that match the pattern, which may be a\n  'shell glob'.\n  For 'sig', 'pin' and 'param', the first pattern may be\n  -tdatatype where datatype is the data type (e.g., 'float')\n  in this case, the listed pins, signals, or parameters\n  are restricted to the given data type\n  Names are printed on a single line, space separated.\n",
	"status":    "status [type]\n  Prints status info about HAL.\n  'type' is 'lock', 'mem', or 'all'. \n  If 'type' is omitted, it assumes\n  'all'.\n",
	"debug":     "debug [level]\n   set the messaging level for the realtime API (calls rtapi_set_msg_level)\n   levels are \n   0 = None\n   1 = Errors only (default)\n   2 = Warnings and above\n   3 = Info and above\n   4 = Debug and above\n   5 = All messages\n",
	"save":      "save [type] [filename]\n  Prints HAL state to 'filename' (or stdout), as a series\n  of HAL commands.  State can later be restored by using\n  \"halcmd -f filename\".\n  Type can be 'comp', 'alias', 'sig[u]', 'signal', 'link[a]'\n  'net[a]', 'netl', 'netla', netal', 'param', 'parameter,\n  'unconnectedinpins', 'all, 'allu', or 'thread'.\n  (A final 'a' character (like 'neta' means show arrows for pin direction.)\n  If 'type' is 'allu'), does the equivalent of:\n  'comp', 'alias', 'sigu', 'netla', 'param', 'unconnectedinpins' and 'thread'.\n\n  If 'type' is omitted (or type is 'all'), does the equivalent of:\n  'comp', 'alias', 'sigu', 'netla', 'param', and 'thread'.\n\n  See the man page ($man halcmd) for save option details\n",
	"start":     "start\n  Starts all realtime threads.\n",
	"stop":      "stop\n  Stops all realtime threads.\n",
	"quit":      "quit\n  Stop processing input and terminate halcmd (when\n  reading from a file or stdin).\n",
	"exit":      "exit\n  Stop processing input and terminate halcmd (when\n  reading from a file or stdin).\n",
	"alias":     "alias type name alias\n  Assigns \"alias\" as a second name for the pin or parameter\n  \"name\".  For most operations, an alias provides a second\n  name that can be used to refer to a pin or parameter, both the\n  original name and the alias will work.\n  \"type\" must be pin or param\n  \"name\" must be an existing name or alias of the specified type.\n",
	"unalias":   "unalias type name\n  Removes any alias from the pin or parameter \"name\".\n  \"type\" must be pin or param\n  \"name\" must be an existing name or alias of the specified type.\n",
	"echo":      "echo\necho the commands from stdin to stderr\nUseful for debugging scripted commands from a running program\n",
	"unecho":    "unecho\nTurn off echo of commands from stdin to stdout\n",
	"print":     "print [message]\nThis will print to the terminal the filename, line number and\nan (optional) message. If the message has spaces, put it inside quotes.\nUseful for debugging ie. confirming a HAL file is being run.\n",
}
