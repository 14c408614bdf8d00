package embedded

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/upstream/locations"
)

// fileIO opens the warehouse file system for location, with the catalog's
// properties (credentials, endpoints) overlaid by the object's own,
// confined to the allowed locations.
func (c *Catalog) fileIO(ctx context.Context, location string, props iceberg.Properties) (icebergio.IO, error) {
	merged := maps.Clone(c.props)
	maps.Copy(merged, props)
	fs, err := icebergio.LoadFS(ctx, merged, location)
	if err != nil {
		return nil, err
	}
	return locations.Confine(fs, c.rule), nil
}

// writeJSON writes v as a metadata file at loc, gzip-compressed when the
// object asks for it (write.metadata.compression-codec), as iceberg-go's
// own catalogs do.
func (c *Catalog) writeJSON(ctx context.Context, loc string, props iceberg.Properties, v any) (err error) {
	fs, err := c.fileIO(ctx, loc, props)
	if err != nil {
		return err
	}
	wfs, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return errors.New("warehouse file system is read-only")
	}
	out, err := wfs.Create(loc)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	var w io.Writer = out
	switch codec := props.Get(table.MetadataCompressionKey, table.MetadataCompressionDefault); codec {
	case table.MetadataCompressionCodecNone:
	case table.MetadataCompressionCodecGzip:
		gz := gzip.NewWriter(out)
		defer func() { err = errors.Join(err, gz.Close()) }()
		w = gz
	default:
		return fmt.Errorf("%w: unsupported metadata compression codec %q", errBadRequest, codec)
	}
	return json.NewEncoder(w).Encode(v)
}

// removeFile deletes a metadata file that never got committed.
func (c *Catalog) removeFile(ctx context.Context, loc string) {
	fs, err := c.fileIO(context.WithoutCancel(ctx), loc, nil)
	if err == nil {
		err = fs.Remove(loc)
	}
	if err != nil {
		c.log.Sugar().Warnf("embedded catalog: could not remove uncommitted metadata %s: %v", loc, err)
	}
}

// nextTableMetadataLocation names the metadata file that follows current
// (version 0 for a new table).
func nextTableMetadataLocation(meta table.Metadata, currentLoc string) (string, error) {
	provider, err := table.LoadLocationProvider(meta.Location(), meta.Properties())
	if err != nil {
		return "", err
	}
	return provider.NewTableMetadataFileLocation(metadataVersion(currentLoc) + 1)
}
