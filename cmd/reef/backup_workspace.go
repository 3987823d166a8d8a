package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reefgw/reef/configs"
)

// writeWorkspaces writes every agent's workspace into one .tar.gz at path (mode 0600), each
// under its agent's id: regular files, directories and symlinks (as links, never followed).
// A missing workspace is skipped. Files the agent changes meanwhile are copied as they are
// read.
func writeWorkspaces(cfg *configs.Config, path string) error {
	_, err := saveBackup(path, func(w io.Writer) error {
		gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		tw := tar.NewWriter(gz)
		for _, a := range cfg.Agents {
			if err := tarTree(tw, a.Workspace, a.ID); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	})
	return err
}

// tarTree adds the tree at root to tw under the name prefix.
func tarTree(tw *tar.Writer, root, prefix string) error {
	if _, err := os.Lstat(root); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		case !info.Mode().IsRegular() && !info.IsDir():
			return nil // FIFOs, sockets, devices: not files to keep
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(filepath.Join(prefix, rel))
		if info.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size) // a file that grew meanwhile is cut at its size in the header
		return err
	})
}
