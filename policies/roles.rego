# Role-based access for lakegate.
#
# Global roles come from the groups "admin", "writer" and "reader".
# Namespace roles come from the groups "writer:<ns>" and "reader:<ns>":
# they grant the role on the first-level namespace <ns> and everything
# below it, and nothing else.
#
#   admin   every operation, including view changes
#   writer  every read, plus namespace and table writes (create, update,
#           drop, rename, register, transactions) and loadCredentials;
#           not view changes
#   reader  reads only (config, lists, loads, exists, scan planning,
#           metrics reports); never vended credentials: loadCredentials is
#           denied and every allow carries strip_credentials
#
# signRequest (remote signing of a table's S3 requests) is decided on the
# table with input.request.storage_access: "read" (GET, HEAD, listings)
# for readers and writers, "write" (PUT, POST, DELETE) for writers only.
# explainDecision (POST /lakegate/explain: what this policy decides for
# another principal, and why), previewTable (GET /lakegate/preview: a
# table's rows, read by the gateway) and listShareRecipients (the Delta
# Sharing door's {prefix}/lakegate/recipients: who may read each share)
# are an admin's only.
#
# Operations whose input has no namespace (getConfig, getToken, listing
# top-level namespaces) are open to any holder of any role; other
# namespace-less operations need a global role. renameTable, renameView and
# commitTransaction are decided once per resource they touch (the gateway
# asks for the source and the destination, and for every table of a
# transaction), so namespace roles cover them only when every one of those
# namespaces is covered.
package lakegate.roles

read_ops := {
	"getConfig", "getToken",
	"listNamespaces", "loadNamespaceMetadata", "namespaceExists",
	"listTables", "loadTable", "tableExists",
	"listViews", "loadView", "viewExists",
	"listFunctions", "loadFunction",
	"planTableScan", "fetchPlanningResult", "fetchScanTasks", "cancelPlanning",
	"reportMetrics",
}

write_ops := {
	"createNamespace", "dropNamespace", "updateProperties",
	"createTable", "registerTable", "updateTable", "dropTable", "renameTable", "unregisterTable",
	"commitTransaction", "loadCredentials",
}

view_write_ops := {"createView", "replaceView", "dropView", "renameView", "registerView"}

# Operations on the gateway itself rather than a catalog.
admin_ops := {"explainDecision", "previewTable", "listShareRecipients"}

admin_op_reasons := {
	"explainDecision": "only admins may see the policy's decisions for others",
	"previewTable": "only admins may read rows through the gateway",
	"listShareRecipients": "only admins may see who a share is shared with",
}

known_ops := (((read_ops | write_ops) | view_write_ops) | admin_ops) | {"signRequest"}

storage_access := object.get(input, ["request", "storage_access"], "")

# Catalog-level operations any role holder needs to connect and browse.
catalog_ops := {"getConfig", "getToken"}

op := input.operation

groups := {g | some g in input.principal.groups}

namespace := object.get(input, ["resource", "namespace"], [])

global_roles contains r if {
	some r in {"admin", "writer", "reader"}
	r in groups
}

# grants holds the principal's namespace roles as [role, namespace] pairs,
# parsed once per evaluation from groups like "reader:sales". Only the
# first ":" separates, so namespace names may contain colons.
grants contains [r, ns] if {
	some g in input.principal.groups
	i := indexof(g, ":")
	i > 0
	r := substring(g, 0, i)
	r in {"writer", "reader"}
	ns := substring(g, i + 1, -1)
}

has_any_role if count(global_roles) > 0

has_any_role if count(grants) > 0

# Catalog-wide operations: every role holder gets reader level for them.
catalog_wide if op in catalog_ops

catalog_wide if {
	op == "listNamespaces"
	count(namespace) == 0
}

# holds(r): the principal has role r for this request, globally or on the
# request's first-level namespace. Membership tests on the groups (rather
# than building the role sets) keep a decision on Rego's fast path.
holds(r) if r in input.principal.groups

holds(r) if {
	r != "admin"
	count(namespace) > 0
	concat(":", [r, namespace[0]]) in input.principal.groups
}

# role is the strongest role that applies to this request.
role := "admin" if {
	holds("admin")
} else := "writer" if {
	holds("writer")
} else := "reader" if {
	holds("reader")
} else := "reader" if {
	catalog_wide
	has_any_role
}

permits("admin", _) := true

permits("writer", o) if o in read_ops

permits("writer", o) if o in write_ops

permits("reader", o) if o in read_ops

permits("writer", "signRequest") if storage_access in {"read", "write"}

permits("reader", "signRequest") if storage_access == "read"

allowed if permits(role, op)

decision := {
	"allow": true,
	"reason": sprintf("%s may %s", [role, op]),
	"obligations": {"strip_credentials": role == "reader"},
} if {
	allowed
} else := {"allow": false, "reason": deny_reason}

deny_reason := sprintf("principal %q has no lakegate role", [input.principal.id]) if {
	not has_any_role
} else := sprintf("%s without a namespace needs a global role", [op]) if {
	not role
	count(namespace) == 0
} else := sprintf("principal %q has no role on namespace %q", [input.principal.id, namespace[0]]) if {
	not role
} else := sprintf("unknown operation %q", [op]) if {
	not op in known_ops
} else := "reader may not loadCredentials: readers never receive vended credentials" if {
	role == "reader"
	op == "loadCredentials"
} else := "reader may not signRequest for writing: readers never write a table's files" if {
	role == "reader"
	op == "signRequest"
} else := sprintf("%s may not %s: view changes need admin", [role, op]) if {
	op in view_write_ops
} else := sprintf("%s may not %s: %s", [role, op, admin_op_reasons[op]]) if {
	op in admin_ops
} else := sprintf("%s may not %s", [role, op])

# visible holds the indexes of listed items the principal may read: all of
# them for a global role, those under the principal's namespaces otherwise.
visible contains i if {
	count(global_roles) > 0
	some i, _ in input.items
}

visible contains i if {
	some i, item in input.items
	item.namespace[0] in readable_namespaces
}

readable_namespaces := {ns | some [_, ns] in grants}
