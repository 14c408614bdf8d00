package storage

import "fmt"

// Within refuses the object at uri (s3://bucket/key) unless it lies
// under one of places, read as strictly as a location (ParsePlace: no
// encoded, empty, "." or ".." segment): for what the gateway hands out
// for one object without a client's request to read, such as a Delta
// Sharing file URL presigned with the catalog's keys.
func Within(places []Place, uri string) error {
	obj, err := ParsePlace(uri)
	if err != nil {
		return fmt.Errorf("file %q: %w", uri, err)
	}
	for _, p := range places {
		if p.contains(obj.Bucket, obj.Prefix) {
			return nil
		}
	}
	return fmt.Errorf("file %q is outside the table's locations", uri)
}
