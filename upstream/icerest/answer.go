package icerest

// TableAnswer is what lakegate reads from a table answer (a
// LoadTableResult or CommitTableResponse) in the one pass that checks it:
// what the cache keys and marks an entry by, what strip_credentials looks
// for, and the table properties a Refresher reads. The pipeline hands it
// on with the answer's bytes, so no later stage parses them again.
//
// One TableAnswer is shared by every answer with the same bytes (the
// check's verdicts are remembered per content): it must not be changed.
type TableAnswer struct {
	// MetadataLocation is "metadata-location" ("" when the answer has
	// none: a staged create).
	MetadataLocation string
	// HasMetadataLocation: "metadata-location" is a string.
	HasMetadataLocation bool
	// HasMetadata: "metadata" is an object.
	HasMetadata bool
	// Properties are the metadata's "properties" (nil when it has none).
	Properties map[string]string
	// HasStorageCredentials: the answer has a "storage-credentials"
	// member, even an empty one.
	HasStorageCredentials bool
	// VendedCredentials: "storage-credentials" holds at least one
	// credential (or is not the empty list or null the spec allows).
	VendedCredentials bool
	// SecretConfig: "config" has a key IsSecretConfigKey names.
	SecretConfig bool
	// SignerHeaders: "remote-signing-config" names static headers a
	// client must send its signer: they may authenticate to the backend's
	// signer, so they are credentials too.
	SignerHeaders bool
	// SignerSettings: the answer sends the client to a remote signer of
	// the backend's: a "remote-signing-config", or a config key of
	// SignerConfigKeys.
	SignerSettings bool
}

// Credentials reports an answer that carries credentials: one
// principal's, never to be served to another.
func (a *TableAnswer) Credentials() bool {
	return a != nil && (a.VendedCredentials || a.SecretConfig || a.SignerHeaders)
}

// Strippable reports an answer strip_credentials changes: it has
// storage-credentials, secret config or signer headers.
func (a *TableAnswer) Strippable() bool {
	return a != nil && (a.HasStorageCredentials || a.SecretConfig || a.SignerHeaders)
}
