// Package fileurl hands Delta Sharing recipients short-lived URLs for the
// Parquet data files of a shared table.
//
// The Delta Sharing protocol returns one `url` plus an
// `expirationTimestamp` per file; clients refresh URLs when about 15 minutes
// remain, so lifetimes must comfortably exceed that (lakegate defaults to
// DefaultLifetime). Two back ends are provided:
//
//   - S3Presigner: SigV4 presigned GetObject URLs built only from
//     the table's own FileIO properties (never the host's credential chain).
//   - Local: tables on a local file system are served by lakegate itself
//     through URLs that carry an HMAC-sealed token (see Sealer) binding the
//     file to the table location it must stay inside.
//
// Sealer is also meant for other short-lived opaque tokens (for example
// pagination tokens); the purpose string keeps token kinds from being
// swapped for one another.
package fileurl

import "time"

// DefaultLifetime is how long lakegate's file URLs stay valid unless
// configured otherwise. One hour gives clients 45 minutes of use before the
// protocol's 15-minute refresh threshold kicks in.
const DefaultLifetime = time.Hour
