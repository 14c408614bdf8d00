package icerest

import (
	"strings"
	"testing"
)

// TestCheckQuery: the spec's query parameters are vetted by type; others
// pass unchanged.
func TestCheckQuery(t *testing.T) {
	for _, tc := range []struct{ op, query string }{
		{OpListTables, ""},
		{OpListTables, "pageSize=100&pageToken="},
		{OpListNamespaces, "parent=a%1Fb&pageSize=1&pageToken=abc"},
		{OpListNamespaces, "returnUuids=true&returnProtectionStatus=FALSE"},
		{OpDropTable, "purgeRequested=true"},
		{OpDropTable, "purgeRequested=False"},
		{OpDropTable, "purgeRequested=&pageSize="}, // empty is absent
		{OpLoadTable, "snapshots=refs"},
		{OpLoadTable, "snapshots=all&referenced-by=ns%1Fv"},
		{OpLoadCredentials, "planId=p1"},
		{OpLoadTable, "vendorFlag=anything&pageSize=abc"}, // not loadTable's parameters
		{OpUpdateTable, "x=1"},
	} {
		if err := CheckQuery(tc.op, tc.query); err != nil {
			t.Errorf("%s ?%s: %v", tc.op, tc.query, err)
		}
	}
}

func TestCheckQueryBad(t *testing.T) {
	for _, tc := range []struct{ op, query, want string }{
		{OpListTables, "pageSize=abc", "pageSize"},
		{OpListTables, "pageSize=-1", "at least 1"},
		{OpListTables, "pageSize=0", "at least 1"},
		{OpListViews, "pageSize=1.5", "int32"},
		{OpListNamespaces, "pageSize=2147483648", "int32"},
		{OpListNamespaces, "pageSize=10&pageSize=x", "pageSize"},
		{OpListNamespaces, "returnUuids=maybe", "true or false"},
		{OpListTables, "returnProtectionStatus=1", "true or false"},
		{OpDropTable, "purgeRequested=maybe", "true or false"},
		{OpLoadTable, "snapshots=some", "one of"},
		{OpListTables, "pageToken=%ZZ", "malformed query string"},
		{OpListTables, "a=b;c=d", "malformed query string"},
	} {
		err := CheckQuery(tc.op, tc.query)
		if err == nil {
			t.Errorf("%s ?%s passed", tc.op, tc.query)
			continue
		}
		if e := apiErr(t, err); e.Code != 400 || e.Type != BadRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s ?%s: got %d %s %q, want 400 containing %q", tc.op, tc.query, e.Code, e.Type, e.Message, tc.want)
		}
	}
}
