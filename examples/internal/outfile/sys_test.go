package outfile

import "golang.org/x/sys/unix"

func statUID(uid uint32) *unix.Stat_t { return &unix.Stat_t{Uid: uid} }

func mkfifo(name string) error { return unix.Mkfifo(name, 0o600) }
