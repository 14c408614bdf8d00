package lakegate.no_vended_credentials_test

import data.lakegate.no_vended_credentials as policy

req(groups, op) := {"principal": {"id": "u", "groups": groups}, "operation": op}

test_employee_keeps_credentials if {
	d := policy.decision with input as req(["staff"], "loadTable")
	d.allow
	d.obligations.strip_credentials == false
	e := policy.decision with input as req(["staff"], "loadCredentials")
	e.allow
}

test_contractor_credentials_stripped if {
	d := policy.decision with input as req(["staff", "contractors"], "loadTable")
	d.allow
	d.obligations.strip_credentials == true
}

test_contractor_load_credentials_denied if {
	d := policy.decision with input as req(["contractors"], "loadCredentials")
	not d.allow
	d.reason == "contractors may not loadCredentials: vended credentials are withheld from contractors"
}

test_contractor_may_write if {
	d := policy.decision with input as req(["contractors"], "updateTable")
	d.allow
}

test_missing_groups_not_contractor if {
	d := policy.decision with input as {"principal": {"id": "u"}, "operation": "loadTable"}
	d.allow
	d.obligations.strip_credentials == false
}

test_all_visible if {
	policy.visible == {0, 1} with input as {"items": [{"namespace": ["a"]}, {"namespace": ["b"]}]}
}
