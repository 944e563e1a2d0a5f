// Package contract is the adapter contract suite: the scenarios every
// driver adapter of tailroute must pass on the simulated cluster (package
// sim), written once and run against gocql v1 (policy, speculative) and the
// Apache v2 driver (apache/policy, apache/speculative). An adapter's test
// binds its driver (a Driver or a HedgeDriver: how to create a policy or
// Hedger, open a wired session, plan a query) and calls Policies or
// Hedging; tests of what only one driver has (v1's poll plan, v2's host
// pinning and Arm) stay in that adapter. Scenarios assert on counts the
// simulator and the policies record and on the order of events, not on
// wall-clock margins. Only tests import it.
package contract
