package kerneldetect

import (
	"strings"
)

// Distro is the Linux distribution and architecture, as far as the tree
// tells them: etc/os-release (else usr/lib/os-release), else the vendor
// named in the kernel version string. It decides which real-time kernel
// package NextSteps names.
type Distro struct {
	// ID is os-release's ID ("debian", "ubuntu"), or the vendor in the
	// kernel version string in lower case; "" when unknown.
	ID string `json:"id"`
	// IDLike is os-release's ID_LIKE ("debian" on Raspberry Pi OS).
	IDLike string `json:"id_like,omitempty"`
	// VersionID is os-release's VERSION_ID ("12", "24.04").
	VersionID string `json:"version_id,omitempty"`
	// Arch is the Debian architecture of the kernel: "amd64", "arm64" or
	// "armmp" from the release suffix (6.1.0-47-amd64), else "amd64" or
	// "arm64" from the config (CONFIG_X86_64, CONFIG_ARM64); "" when
	// unknown.
	Arch string `json:"arch"`
	// ArchFromRelease is true when Arch comes from a Debian kernel
	// flavour suffix, that is the running kernel is Debian's.
	ArchFromRelease bool `json:"arch_from_release"`
	// Source names the evidence for ID: "etc/os-release",
	// "usr/lib/os-release" or "proc/sys/kernel/version".
	Source string `json:"source"`
}

// Is reports whether the distribution is id or declares itself like it.
func (d Distro) Is(id string) bool {
	if d.ID == id {
		return true
	}
	for _, like := range strings.Fields(d.IDLike) {
		if like == id {
			return true
		}
	}
	return false
}

// maxOSReleaseValue bounds what parseOSRelease keeps from a file someone
// handed over.
const maxOSReleaseValue = 128

// parseOSRelease returns the ID, ID_LIKE and VERSION_ID of an os-release
// file (os-release(5): KEY=value lines, values optionally quoted). Values
// are cut to 128 bytes; a value with a byte outside printable ASCII is
// dropped.
func parseOSRelease(b []byte) (id, idLike, versionID string) {
	for _, line := range strings.Split(string(b), "\n") {
		key, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if !printableASCII(v) {
			continue
		}
		v = truncate(v, maxOSReleaseValue)
		switch key {
		case "ID":
			id = strings.ToLower(v)
		case "ID_LIKE":
			idLike = strings.ToLower(v)
		case "VERSION_ID":
			versionID = v
		}
	}
	return id, idLike, versionID
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// debianArch returns the Debian kernel flavour's architecture from a
// release string ("6.1.0-47-rt-amd64" -> "amd64"), "" when it has none.
func debianArch(release string) string {
	for _, a := range []string{"amd64", "arm64", "armmp", "armmp-lpae"} {
		if strings.HasSuffix(release, "-"+a) {
			if a == "armmp-lpae" {
				return "armmp"
			}
			return a
		}
	}
	return ""
}

// versionVendor returns the distribution named in a kernel version string
// ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.170-3", "#35-Ubuntu SMP"), "" when
// none.
func versionVendor(version string) string {
	switch {
	case strings.Contains(version, "Ubuntu"):
		return "ubuntu"
	case strings.Contains(version, " Debian "):
		return "debian"
	}
	return ""
}

func (d *detector) distro() {
	r := &d.r.Distro
	for _, name := range []string{"etc/os-release", "usr/lib/os-release"} {
		b, err := d.readQuiet(name)
		if err != nil {
			continue
		}
		r.ID, r.IDLike, r.VersionID = parseOSRelease(b)
		r.Source = name
		d.note(name, "ID="+orDash(r.ID)+" ID_LIKE="+orDash(r.IDLike)+" VERSION_ID="+orDash(r.VersionID), "distribution")
		break
	}
	if r.ID == "" {
		if v := versionVendor(d.r.Uname.Version); v != "" {
			r.ID, r.Source = v, "proc/sys/kernel/version"
			d.note("proc/sys/kernel/version", v, "distribution named in the kernel version string (no os-release)")
		}
	}
	switch a := debianArch(d.r.Uname.Release); {
	case a != "":
		r.Arch, r.ArchFromRelease = a, true
	case d.cfg["CONFIG_X86_64"] == "y":
		r.Arch = "amd64"
	case d.cfg["CONFIG_ARM64"] == "y":
		r.Arch = "arm64"
	}
}
