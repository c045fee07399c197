package hal

import (
	"errors"
	"slices"
	"strings"

	"github.com/gortapi/gortapi/internal/names"
	"github.com/gortapi/gortapi/rtapi"
)

// resolveAliases returns args with each pin or parameter alias where
// verb takes a pin or parameter name replaced by the item's name, as
// LinuxCNC finds a pin or parameter by its name or its alias.
func (h *HAL) resolveAliases(verb string, args []string) []string {
	from, to := 0, 1
	switch verb {
	case "setp", "getp", "ptype", "linkps", "unlinkp":
	case "safep":
		from, to = 1, 2
	case "net":
		from, to = 1, len(args)
	default:
		return args
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.aliases) == 0 {
		return args
	}
	out := slices.Clone(args)
	for i := from; i < to && i < len(out); i++ {
		out[i] = h.realNameLocked(out[i])
	}
	return out
}

// realNameLocked is the pin or parameter that name names: itself, else
// the item name is the alias of. Called with h.mu.
func (h *HAL) realNameLocked(name string) string {
	if _, ok := h.pins[name]; ok {
		return name
	}
	if _, ok := h.params[name]; ok {
		return name
	}
	if orig, ok := h.aliases[name]; ok {
		return orig
	}
	return name
}

// displayNameLocked is the name show, list and save print for the pin
// or parameter name: its alias if it has one. Called with h.mu.
func (h *HAL) displayNameLocked(name string) string {
	if a, ok := h.aliasOf[name]; ok {
		return a
	}
	return name
}

// itemLocked finds the pin or parameter (kind) that name names, by its
// name or its alias: its name. Called with h.mu.
func (h *HAL) itemLocked(kind, name string) (string, bool) {
	real := h.realNameLocked(name)
	var ok bool
	if kind == "pin" {
		_, ok = h.pins[real]
	} else {
		_, ok = h.params[real]
	}
	return real, ok
}

// alias runs halcmd's "alias pin|param NAME ALIAS" (hal_pin_alias,
// hal_param_alias): NAME, by its name or its alias, takes ALIAS as its
// new name in show, list and save; every command finds it by either.
// A second alias replaces the first.
func (h *HAL) alias(kind, name, alias string) error {
	const op = "alias"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.aliasAllowedLocked(op, kind); err != nil {
		return err
	}
	if err := names.Check(kind+" alias", alias); err != nil {
		return &Error{Op: op, Err: errors.Join(err, rtapi.ErrInvalid)}
	}
	_, pin := h.pins[alias]
	_, par := h.params[alias]
	_, ali := h.aliases[alias]
	if pin || par || ali {
		what := map[string]string{"pin": "pin", "param": "parameter"}[kind]
		return errf(op, "", "", rtapi.ErrInvalid, "duplicate %s/alias name '%s'", what, alias)
	}
	real, ok := h.itemLocked(kind, name)
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "%s '%s' not found", kind, name)
	}
	if h.aliases == nil {
		h.aliases, h.aliasOf = map[string]string{}, map[string]string{}
	}
	if old, ok := h.aliasOf[real]; ok {
		delete(h.aliases, old)
	}
	h.aliases[alias], h.aliasOf[real] = real, alias
	return nil
}

// unalias runs halcmd's "unalias pin|param NAME": NAME, by its name or
// its alias, goes back to its name; one without an alias is left alone.
func (h *HAL) unalias(kind, name string) error {
	const op = "unalias"
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.aliasAllowedLocked(op, kind); err != nil {
		return err
	}
	real, ok := h.itemLocked(kind, name)
	if !ok {
		return errf(op, "", "", rtapi.ErrInvalid, "%s '%s' not found", kind, name)
	}
	if a, ok := h.aliasOf[real]; ok {
		delete(h.aliases, a)
		delete(h.aliasOf, real)
	}
	return nil
}

// aliasAllowedLocked checks what alias and unalias share: an open HAL,
// kind pin or param, no CONFIG lock (LinuxCNC's "X_alias called while
// HAL locked"). Called with h.mu.
func (h *HAL) aliasAllowedLocked(op, kind string) error {
	if err := h.checkOpen(op, "", ""); err != nil {
		return err
	}
	if kind != "pin" && kind != "param" {
		return errf(op, "", "", rtapi.ErrInvalid, "type %q is neither pin nor param", kind)
	}
	if h.lock&lockConfig != 0 {
		return errf(op, "", "", rtapi.ErrPermission, "%s_alias called while HAL locked", kind)
	}
	return nil
}

// aliasRow is one alias: kind "pin" or "param", the item's name, its alias.
type aliasRow struct{ kind, name, alias string }

// aliasRowsLocked lists the aliases of the pins and parameters (kinds
// "pin", "param", in that order) that exist, each kind sorted by alias
// (LinuxCNC's lists are sorted by name, and an alias is the item's name
// there), those whose name or alias matches pattern. Called with h.mu.
func (h *HAL) aliasRowsLocked(patterns []string, kinds ...string) []aliasRow {
	var rows []aliasRow
	for _, kind := range kinds {
		var part []aliasRow
		for real, a := range h.aliasOf {
			_, ok := h.itemLocked(kind, real)
			if ok && (matchAny(patterns, a) || matchAny(patterns, real)) {
				part = append(part, aliasRow{kind, real, a})
			}
		}
		slices.SortFunc(part, func(x, y aliasRow) int { return strings.Compare(x.alias, y.alias) })
		rows = append(rows, part...)
	}
	return rows
}
