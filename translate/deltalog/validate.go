package deltalog

import "fmt"

// validate checks an action's required fields and normalises what the
// protocol gives two spellings of. It is shared by JSON lines and parquet
// rows, so both formats are held to the same rules.
func validate(a *Action) error {
	switch {
	case a.Add != nil:
		return validateAdd(a.Add)
	case a.Remove != nil:
		return validateRemove(a.Remove)
	case a.MetaData != nil:
		return validateMetadata(a.MetaData)
	case a.Protocol != nil:
		return validateProtocol(a.Protocol)
	case a.Txn != nil:
		if a.Txn.AppID == "" {
			return errString("txn without appId")
		}
	case a.DomainMetadata != nil:
		if a.DomainMetadata.Domain == "" {
			return errString("domainMetadata without domain")
		}
	case a.Sidecar != nil:
		return validateSidecar(a.Sidecar)
	case a.CheckpointMetadata != nil:
		if a.CheckpointMetadata.Version < 0 {
			return errString("checkpointMetadata with a negative version")
		}
	}
	return nil
}

func validateAdd(f *AddFile) error {
	if err := validatePath("add", f.Path); err != nil {
		return err
	}
	if f.Size < 0 {
		return fmt.Errorf("add %q with a negative size", f.Path)
	}
	if f.PartitionValues == nil {
		f.PartitionValues = map[string]*string{}
	}
	nullEmpty(f.PartitionValues)
	return validateDV("add", f.Path, f.DeletionVector)
}

func validateRemove(f *RemoveFile) error {
	if err := validatePath("remove", f.Path); err != nil {
		return err
	}
	nullEmpty(f.PartitionValues)
	return validateDV("remove", f.Path, f.DeletionVector)
}

// validatePath checks that a file action's path is a URI that ResolvePath
// takes, so a bad path is refused with its line.
func validatePath(kind, p string) error {
	if p == "" {
		return fmt.Errorf("%s without a path", kind)
	}
	if _, err := ResolvePath("", p); err != nil {
		return fmt.Errorf("%s %w", kind, err)
	}
	return nil
}

// nullEmpty applies "Partition Value Serialization": "An empty string for
// any type translates to a null partition value."
func nullEmpty(pv map[string]*string) {
	for k, v := range pv {
		if v != nil && *v == "" {
			pv[k] = nil
		}
	}
}

// validateDV checks a descriptor against "Deletion Vector Descriptor Schema".
func validateDV(kind, path string, dv *DeletionVector) error {
	if dv == nil {
		return nil
	}
	switch dv.StorageType {
	case "u", "p":
	case "i":
		if dv.Offset != nil {
			return fmt.Errorf("%s %q: an inline deletion vector with an offset", kind, path)
		}
	default:
		return fmt.Errorf("%s %q: deletion vector storageType %q is none of u, i, p", kind, path, dv.StorageType)
	}
	if dv.PathOrInlineDV == "" {
		return fmt.Errorf("%s %q: deletion vector without pathOrInlineDv", kind, path)
	}
	if dv.SizeInBytes < 0 || dv.Cardinality < 0 || (dv.Offset != nil && *dv.Offset < 0) {
		return fmt.Errorf("%s %q: deletion vector with a negative offset, size or cardinality", kind, path)
	}
	return nil
}

func validateMetadata(m *Metadata) error {
	if m.ID == "" {
		return errString("metaData without id")
	}
	if m.SchemaString == "" {
		return errString("metaData without schemaString")
	}
	// Both are required maps; nil and empty are one thing, whichever
	// format (JSON or parquet) the action came from.
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	seen := map[string]bool{}
	for _, c := range m.PartitionColumns {
		if c == "" || seen[c] {
			return fmt.Errorf("metaData partitionColumns has an empty or repeated name %q", c)
		}
		seen[c] = true
	}
	return nil
}

// validateProtocol checks the versions; whether this reader can read the
// table is decided on the snapshot's protocol (see checkReadable).
func validateProtocol(p *Protocol) error {
	if p.MinReaderVersion < 1 || p.MinWriterVersion < 1 {
		return fmt.Errorf("protocol versions must be at least 1, got reader %d writer %d", p.MinReaderVersion, p.MinWriterVersion)
	}
	return nil
}

func validateSidecar(s *Sidecar) error {
	if err := validatePath("sidecar", s.Path); err != nil {
		return err
	}
	if s.SizeInBytes < 0 {
		return fmt.Errorf("sidecar %q with a negative size", s.Path)
	}
	return nil
}
