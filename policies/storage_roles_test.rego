package lakegate.storage_roles_test

import data.lakegate.roles
import data.lakegate.storage_roles

req(groups, op, catalog, access) := {
	"principal": {"id": "u", "groups": groups},
	"operation": op,
	"api": "iceberg",
	"api_operation": op,
	"resource": {"catalog": catalog, "namespace": ["sales"], "table": "t"},
	"request": {"storage_access": access},
}

decide(groups, op, catalog, access) := d if {
	d := storage_roles.decision with input as req(groups, op, catalog, access)
}

roles_decide(groups, op, catalog, access) := d if {
	d := roles.decision with input as req(groups, op, catalog, access)
}

test_reader_is_vended_on_a_storage_catalog if {
	every op in storage_roles.vending_ops {
		d := decide(["reader"], op, "lake", "")
		d.allow
		d.obligations.strip_credentials == false
	}
	decide(["reader:sales"], "loadCredentials", "lake", "").allow
}

test_reader_vended_keys_stay_read_only if {
	# The gateway makes read-write keys only when signRequest "write" is allowed.
	decide(["reader"], "signRequest", "lake", "read").allow
	d := decide(["reader"], "signRequest", "lake", "write")
	not d.allow
	d.reason == "reader may not signRequest for writing: readers never write a table's files"
}

test_reader_is_vended_nothing_elsewhere if {
	d := decide(["reader"], "loadTable", "other", "")
	d.allow
	d.obligations.strip_credentials == true
	not decide(["reader"], "loadCredentials", "other", "").allow
}

test_reader_still_writes_nothing if {
	not decide(["reader"], "createTable", "lake", "").allow
	not decide(["reader"], "updateTable", "lake", "").allow
}

test_no_role_no_keys if {
	not decide(["reader:other"], "loadTable", "lake", "").allow
	not decide([], "loadCredentials", "lake", "").allow
}

test_otherwise_roles if {
	every groups in [["writer"], ["admin"], ["reader"]] {
		every op in {"loadTable", "updateTable", "signRequest", "listTables"} {
			decide(groups, op, "other", "read") == roles_decide(groups, op, "other", "read")
		}
	}
	decide(["writer"], "loadCredentials", "lake", "") == roles_decide(["writer"], "loadCredentials", "lake", "")
}

recipient(op, api) := {
	"principal": {"id": "recipient:lake/r", "groups": ["delta-sharing-recipient"]},
	"operation": op,
	"api": api,
	"api_operation": "queryTable",
	"resource": {"share": "lake", "catalog": "lake", "namespace": ["shared"], "table": "t"},
	"items": [{"namespace": ["shared"], "table": "t"}],
}

test_recipient_reads_its_share if {
	every op in {"listTables", "loadTable", "planTableScan"} {
		d := storage_roles.decision with input as recipient(op, "sharing")
		d.allow
	}
	0 in storage_roles.visible with input as recipient("listTables", "sharing")
}

test_recipient_writes_nothing_and_only_through_sharing if {
	not storage_roles.decision.allow with input as recipient("updateTable", "sharing")
	not storage_roles.decision.allow with input as recipient("loadTable", "iceberg")
	not storage_roles.decision.allow with input as recipient("loadCredentials", "sharing")
	not 0 in storage_roles.visible with input as recipient("listTables", "iceberg")
}
