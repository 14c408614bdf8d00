# The roles policy (roles.rego) for a gateway that governs the storage of
# the catalogs in storage_catalogs (a catalog `storage` block with
# vended_credentials, docs/storage.md): there readers are vended
# credentials too, read-only. The gateway scopes the keys it vends to the
# table and makes them read-write or read-only by signRequest's
# storage_access, which roles allows readers for "read" only; the
# backend's own keys never reach a client of such a catalog. Everywhere
# else this is roles itself: readers get no keys (strip_credentials),
# since what a backend vends is not read-only.
#
# Delta Sharing recipients (group delta-sharing-recipient, which the
# gateway gives only to a share's recipient token and keeps to that
# share) read what their share shares; their file URLs are presigned GETs.
#
# examples/storage uses it, for its catalog `lake`; name your own
# catalogs in storage_catalogs. A catalog named here without a storage
# block would hand readers its backend's keys.
package lakegate.storage_roles

import data.lakegate.roles

storage_catalogs := {"lake"}

# The operations whose answers carry vended keys.
vending_ops := {"loadTable", "loadCredentials"}

decision := {
	"allow": true,
	"reason": sprintf("a recipient of share %q may %s it", [input.resource.share, input.api_operation]),
	"obligations": {"strip_credentials": true},
} if {
	input.api == "sharing"
	"delta-sharing-recipient" in input.principal.groups
	input.operation in roles.read_ops
} else := {
	"allow": true,
	"reason": sprintf("reader may %s: read-only vended credentials for catalog %q", [input.operation, input.resource.catalog]),
	"obligations": {"strip_credentials": false},
} if {
	input.resource.catalog in storage_catalogs
	input.operation in vending_ops
	roles.role == "reader"
} else := roles.decision

visible contains i if some i in roles.visible

visible contains i if {
	input.api == "sharing"
	"delta-sharing-recipient" in input.principal.groups
	some i, _ in input.items
}
