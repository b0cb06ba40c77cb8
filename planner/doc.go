// Package planner turns parsed NSPL statements into typed plans: plain Go
// values with no parser types in them. Checks that need no state (PERIOD
// must be positive, …) live here. Every plan prints back as canonical NSPL,
// and parsing that text gives the same plan.
package planner
