// Package policies is lakegate's authorization engine: Rego policies (OPA)
// loaded from a directory, prepared once per policy set, hot-reloaded, and
// evaluated per request. It fails closed: anything but a well-formed allow
// is a deny.
//
// # Rego contract
//
// A policy package (Config.Package, e.g. lakegate.roles) is queried at two
// rules; input is the JSON form of Input (nil string slices appear as []).
//
// decision (required; its absence fails the load) must be an object:
//
//	{"allow": <boolean>, "reason": <string, optional>,
//	 "obligations": {"strip_credentials": <boolean, optional>}}
//
// Undefined, a non-object, a non-boolean allow, or malformed obligations
// deny with an error (ErrUndefined, ErrInvalid), as do evaluation errors
// and timeouts (ErrTimeout). A deny without a reason gets "denied by
// policy". strip_credentials tells the gateway to remove vended storage
// credentials from the response. A policy set whose decision errors or is
// malformed on the sample requests of checkInputs is refused at load.
//
// visible (optional; without it Filter fails closed) is a set or array of
// indexes into input.items, the listing page being filtered, evaluated
// once per page. An index outside the page fails the whole page.
//
// Files: every *.rego in Config.Dir except *_test.rego, parsed as Rego v1.
// The shipped packages are lakegate.allow_all, lakegate.roles,
// lakegate.no_vended_credentials and lakegate.demo; the Rego unit tests next
// to them run under `go test` (TestRegoUnitTests) and `opa test policies`.
package policies
