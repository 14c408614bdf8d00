package lakegate.roles_test

import data.lakegate.roles

req(id, groups, op, ns) := {
	"principal": {"id": id, "groups": groups},
	"operation": op,
	"api": "iceberg",
	"api_operation": op,
	"resource": {"catalog": "main", "namespace": ns, "table": "t"},
}

decide(id, groups, op, ns) := d if {
	d := roles.decision with input as req(id, groups, op, ns)
}

allows(groups, op, ns) if decide("u", groups, op, ns).allow

denies(groups, op, ns) if not decide("u", groups, op, ns).allow

# --- admin

test_admin_does_everything if {
	every op in roles.known_ops {
		allows(["admin"], op, ["sales"])
	}
}

test_admin_keeps_credentials if {
	d := decide("root", ["admin"], "loadTable", ["sales"])
	d.allow
	d.obligations.strip_credentials == false
}

# --- writer

test_writer_reads_and_writes_tables if {
	every op in roles.read_ops | roles.write_ops {
		allows(["writer"], op, ["sales"])
	}
}

test_writer_may_load_credentials if {
	d := decide("w", ["writer"], "loadCredentials", ["sales"])
	d.allow
	d.obligations.strip_credentials == false
}

test_writer_may_not_change_views if {
	every op in roles.view_write_ops {
		denies(["writer"], op, ["sales"])
	}
	decide("w", ["writer"], "createView", ["sales"]).reason == "writer may not createView: view changes need admin"
}

test_only_admin_explains if {
	allows(["admin"], "explainDecision", [])
	decide("w", ["writer"], "explainDecision", []).reason == "writer may not explainDecision: only admins may see the policy's decisions for others"
	decide("r", ["reader"], "explainDecision", []).reason == "reader may not explainDecision: only admins may see the policy's decisions for others"
	decide("r", ["reader:sales"], "explainDecision", []).reason == "explainDecision without a namespace needs a global role"
}

test_only_admin_previews if {
	allows(["admin"], "previewTable", ["sales"])
	decide("w", ["writer"], "previewTable", ["sales"]).reason == "writer may not previewTable: only admins may read rows through the gateway"
	decide("r", ["reader:sales"], "previewTable", ["sales"]).reason == "reader may not previewTable: only admins may read rows through the gateway"
}

test_only_admin_lists_share_recipients if {
	allows(["admin"], "listShareRecipients", [])
	decide("w", ["writer"], "listShareRecipients", []).reason == "writer may not listShareRecipients: only admins may see who a share is shared with"
	decide("r", ["reader:sales"], "listShareRecipients", []).reason == "listShareRecipients without a namespace needs a global role"
}

test_writer_reads_views if {
	allows(["writer"], "loadView", ["sales"])
	allows(["writer"], "listViews", ["sales"])
}

# --- reader

test_reader_reads if {
	every op in roles.read_ops {
		allows(["reader"], op, ["sales"])
	}
}

test_reader_scan_planning_is_a_read if {
	allows(["reader"], "planTableScan", ["sales"])
	allows(["reader"], "fetchPlanningResult", ["sales"])
	allows(["reader"], "fetchScanTasks", ["sales"])
}

test_reader_may_not_write if {
	every op in roles.write_ops | roles.view_write_ops {
		denies(["reader"], op, ["sales"])
	}
	decide("r", ["reader"], "updateTable", ["sales"]).reason == "reader may not updateTable"
}

test_reader_never_gets_credentials if {
	d := decide("r", ["reader"], "loadTable", ["sales"])
	d.allow
	d.obligations.strip_credentials == true
	e := decide("r", ["reader"], "loadCredentials", ["sales"])
	not e.allow
	e.reason == "reader may not loadCredentials: readers never receive vended credentials"
}

# --- namespace roles

test_namespace_reader_reads_its_namespace_and_below if {
	allows(["reader:sales"], "loadTable", ["sales"])
	allows(["reader:sales"], "loadTable", ["sales", "eu", "2024"])
	decide("r", ["reader:sales"], "loadTable", ["sales"]).obligations.strip_credentials
}

test_namespace_reader_not_elsewhere if {
	d := decide("r", ["reader:sales"], "loadTable", ["finance"])
	not d.allow
	d.reason == `principal "r" has no role on namespace "finance"`
}

test_namespace_role_is_first_level_only if {
	denies(["reader:eu"], "loadTable", ["sales", "eu"])
}

test_namespace_writer_writes_its_namespace if {
	allows(["writer:sales"], "updateTable", ["sales", "eu"])
	allows(["writer:sales"], "createNamespace", ["sales", "new"])
	allows(["writer:sales"], "dropTable", ["sales"])
	d := decide("w", ["writer:sales"], "loadTable", ["sales"])
	d.obligations.strip_credentials == false
	denies(["writer:sales"], "updateTable", ["finance"])
}

test_namespace_writer_plus_global_reader if {
	# reader everywhere, writer (and credentials) only in sales
	d := decide("m", ["reader", "writer:sales"], "loadTable", ["sales"])
	d.obligations.strip_credentials == false
	e := decide("m", ["reader", "writer:sales"], "loadTable", ["finance"])
	e.obligations.strip_credentials == true
	denies(["reader", "writer:sales"], "updateTable", ["finance"])
}

# The gateway decides a rename or transaction once per touched resource.
test_namespace_writer_renames_and_commits_within_namespace if {
	allows(["writer:sales"], "renameTable", ["sales"])
	allows(["writer:sales"], "commitTransaction", ["sales", "eu"])
	denies(["writer:sales"], "renameTable", ["finance"])
	denies(["writer:sales"], "renameView", ["sales"])
	denies(["reader:sales"], "commitTransaction", ["sales"])
}

test_namespace_roles_may_connect_and_list_top_level if {
	allows(["reader:sales"], "getConfig", [])
	allows(["reader:sales"], "listNamespaces", [])
}

test_namespace_less_write_needs_global_role if {
	d := decide("w", ["writer:sales"], "createNamespace", [])
	not d.allow
	d.reason == "createNamespace without a namespace needs a global role"
}

# --- everyone else

test_no_role_denied if {
	d := decide("eve", ["staff"], "loadTable", ["sales"])
	not d.allow
	d.reason == `principal "eve" has no lakegate role`
	denies([], "getConfig", [])
}

test_missing_groups_denied if {
	d := roles.decision with input as {"principal": {"id": "x"}, "operation": "getConfig"}
	not d.allow
}

test_unknown_operation_denied_below_admin if {
	d := decide("w", ["writer"], "launchMissiles", ["sales"])
	not d.allow
	d.reason == `unknown operation "launchMissiles"`
}

# --- visible

items := [
	{"namespace": ["sales"], "table": "orders"},
	{"namespace": ["finance"], "table": "ledger"},
	{"namespace": ["sales", "eu"], "table": "orders"},
	{"namespace": [], "table": "odd"},
]

visible_for(groups) := v if {
	v := roles.visible with input as {
		"principal": {"id": "u", "groups": groups},
		"operation": "listTables",
		"items": items,
	}
}

test_visible_global_reader_sees_all if {
	visible_for(["reader"]) == {0, 1, 2, 3}
}

test_visible_namespace_reader_sees_own if {
	visible_for(["reader:sales"]) == {0, 2}
	visible_for(["writer:finance", "reader:sales"]) == {0, 1, 2}
}

test_visible_no_role_sees_nothing if {
	visible_for(["staff"]) == set()
}

test_allow_reason_names_role if {
	decide("root", ["admin"], "dropTable", ["sales"]).reason == "admin may dropTable"
	decide("r", ["reader:sales"], "loadTable", ["sales"]).reason == "reader may loadTable"
}

test_admin_changes_views if {
	every op in roles.view_write_ops {
		allows(["admin"], op, ["sales"])
	}
}

test_functions_are_read_unregister_is_a_write if {
	allows(["reader"], "listFunctions", ["sales"])
	allows(["reader"], "loadFunction", ["sales"])
	denies(["reader"], "unregisterTable", ["sales"])
	allows(["writer:sales"], "unregisterTable", ["sales"])
	denies(["writer:sales"], "unregisterTable", ["finance"])
}

test_writer_renames_and_commits_globally if {
	allows(["writer"], "renameTable", ["sales"])
	allows(["writer"], "commitTransaction", [])
	denies(["writer"], "renameView", ["sales"])
	denies(["writer"], "registerView", ["sales"])
	allows(["admin"], "registerView", ["sales"])
}

test_reader_lists_top_level if {
	allows(["reader"], "listNamespaces", [])
	denies(["reader"], "createNamespace", [])
}

# --- signRequest (remote signing): read for readers, write for writers

sign(groups, access) := d if {
	d := roles.decision with input as object.union(req("u", groups, "signRequest", ["sales"]),
		{"request": {"storage_access": access}})
}

test_reader_signs_reads_only if {
	sign(["reader"], "read").allow
	not sign(["reader"], "write").allow
	sign(["reader"], "write").reason == "reader may not signRequest for writing: readers never write a table's files"
	sign(["reader:sales"], "read").allow
	not sign(["reader:sales"], "write").allow
}

test_writer_signs_reads_and_writes if {
	sign(["writer"], "read").allow
	sign(["writer"], "write").allow
	sign(["writer:sales"], "write").allow
	not sign(["writer:other"], "write").allow
}

test_sign_without_access_is_denied if {
	not sign(["writer"], "").allow
	not sign(["reader"], "admin").allow
}
