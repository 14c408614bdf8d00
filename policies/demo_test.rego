package lakegate.demo_test

import data.lakegate.demo

anon(op, resource) := {
	"principal": {"id": "anonymous", "groups": []},
	"operation": op,
	"resource": resource,
}

test_anonymous_does_everything if {
	every op in ["getConfig", "createNamespace", "createTable", "updateTable", "loadCredentials", "dropTable", "dropNamespace"] {
		d := demo.decision with input as anon(op, {"namespace": ["db"], "table": "t"})
		d.allow
	}
}

test_drop_protected_table_denied if {
	d := demo.decision with input as anon("dropTable", {"namespace": ["db"], "table": "protected"})
	not d.allow
	d.reason == `dropTable is refused: "protected" is protected in the demo policy`
}

test_drop_protected_namespace_denied if {
	d := demo.decision with input as anon("dropNamespace", {"namespace": ["db", "protected"]})
	not d.allow
}

test_protected_table_otherwise_usable if {
	d := demo.decision with input as anon("updateTable", {"namespace": ["db"], "table": "protected"})
	d.allow
	e := demo.decision with input as anon("dropTable", {"namespace": ["protected"], "table": "t"})
	e.allow
}

test_all_visible if {
	demo.visible == {0, 1, 2} with input as {"items": [{"namespace": ["a"]}, {"namespace": ["b"]}, {"namespace": ["protected"]}]}
}
