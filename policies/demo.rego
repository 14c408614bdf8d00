# demo is the policy of the gateway's root Caddyfile, which listens on
# loopback without authentication, so every caller is the principal
# "anonymous" with no groups. Everything is allowed except dropping a
# namespace or table named "protected", which shows what a deny with a
# reason looks like to an Iceberg client.
package lakegate.demo

protected_name := "protected"

# The name a drop would remove: the table, or the namespace's last level.
dropped := input.resource.table if input.operation == "dropTable"

dropped := input.resource.namespace[count(input.resource.namespace) - 1] if {
	input.operation == "dropNamespace"
}

decision := {
	"allow": false,
	"reason": sprintf("%s is refused: %q is protected in the demo policy", [input.operation, protected_name]),
} if {
	dropped == protected_name
} else := {"allow": true, "reason": "demo policy allows this"}

visible contains i if some i, _ in input.items
