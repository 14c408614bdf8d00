# no_vended_credentials allows everything, but principals in the group
# "contractors" never receive vended storage credentials: loadCredentials
# is denied and every other allow carries strip_credentials, which makes
# the gateway remove credentials from loadTable/createTable responses.
package lakegate.no_vended_credentials

default contractor := false

contractor if "contractors" in input.principal.groups

decision := {
	"allow": false,
	"reason": "contractors may not loadCredentials: vended credentials are withheld from contractors",
} if {
	contractor
	input.operation == "loadCredentials"
} else := {
	"allow": true,
	"reason": "no_vended_credentials policy allows this",
	"obligations": {"strip_credentials": contractor},
}

visible contains i if some i, _ in input.items
