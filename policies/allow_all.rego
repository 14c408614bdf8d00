# allow_all allows every request and shows every listed item. It exists
# so that running without authorization is an explicit, visible choice in
# the configuration rather than the absence of a policy.
package lakegate.allow_all

decision := {"allow": true, "reason": "allow_all policy allows everything"}

visible contains i if some i, _ in input.items
