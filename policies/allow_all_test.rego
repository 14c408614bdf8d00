package lakegate.allow_all_test

import data.lakegate.allow_all

test_allows_anything if {
	d := allow_all.decision with input as {"principal": {"id": "x", "groups": []}, "operation": "dropNamespace"}
	d.allow
	not object.get(d, "obligations", {}).strip_credentials
}

test_all_visible if {
	allow_all.visible == {0, 1} with input as {"items": [{"namespace": ["a"]}, {"namespace": ["b"]}]}
}

test_no_items_none_visible if {
	allow_all.visible == set() with input as {"operation": "listTables"}
}
