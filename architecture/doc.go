// Package architecture holds no code: its test checks that the packages
// import each other only as ARCHITECTURE.md says ("What may import what").
package architecture
