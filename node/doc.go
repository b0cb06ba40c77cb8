// Package node is one nspl node: the replicated catalog (package catalog)
// wired to the node runtime (package clockrt), the tick producers this
// node's clock authority runs, and the control-plane command handler that
// sessions call.
//
// What it owns:
//
//   - Installation. Every committed catalog change installs the lifecycles
//     of the domains it changed (catalog.Change.Domains) into the runtime
//     registry, and touches no other, synchronously, on the catalog's
//     apply goroutine and in commit order (catalog.Config.OnChange), before
//     the Propose that caused it returns and so before anything else uses
//     the revision; the producer set then passes over those domains only.
//     So a commit costs the same whatever the size of the catalog. The
//     whole catalog is installed only when a snapshot restore replaced it
//     (at open, or a snapshot from the leader), and the producer set passes
//     over every domain once at Open. A lifecycle from an older revision
//     never replaces a newer one. An installation counter, advanced only
//     after an installation has put its domains in place and every
//     producer it retires has exited
//     (see Production), tells attachments when the node has installed the
//     committed domains since it started (WaitInstalled), and is the
//     revision the node advertises and the completion boundary waits for.
//   - Production. For every paced running domain whose installed authority
//     is this process's incarnation, one clockrt.Producer bound to the
//     installed fence. A producer whose fence no longer matches is retired
//     off the apply goroutine: cancelled, waited for, and its peer
//     delivery ended (Config.OnRetire), before its domain's successor
//     starts and before the revision that retired it counts as installed;
//     other domains' producers neither wait for it nor hold it up. Reports
//     are applied to the local runtime through Registry.AcceptProgress and
//     then handed to Config.OnProgress, the hook peer delivery attaches
//     to, under a context the retirement cancels (producers.go).
//   - Received progress. AcceptProgress applies a peer's report under the
//     runtime's fence and plausibility checks (Config.MaxClockOffset); a
//     report refused as implausible is counted and logged at most once per
//     ten seconds per domain (refusals.go).
//   - Commands. CreateDomain, AlterPlacement, DropDomain, Start, Stop and
//     CommitTransaction take lifecycle requests, never plans: the statement
//     was planned once, above the node, and the session hands over what it
//     asks for (a lifecycle.CreateDomain, a lifecycle.StartRequest, the
//     lifecycle.StepRequest steps of a transaction, a backup.RestoreRequest),
//     so node links no planner. They read the domain, sample UTC once from
//     the time source,
//     resolve (lifecycle.ResolveStart, ResolveTransaction), propose one
//     catalog command and return after the local node installed the
//     committed revision. Lifecycle refusals come back as *lifecycle.Error
//     values (errors.Is with lifecycle's sentinels), catalog failures as
//     catalog's sentinels. Restore commits its one command the same way,
//     for an archive its caller already verified, after selecting a resumed
//     domain's authority. Capture reads a consistent catalog state for a
//     backup. Neither opens a file: where archives live is the session's
//     business.
//   - Preflight. PreflightTransaction resolves a transaction's queued steps
//     as CommitTransaction does and applies the command to a copy of the
//     catalog state with lifecycle's transitions, proposing nothing, so a
//     session refuses a step that cannot follow the ones before it with the
//     error COMMIT would give (preflight.go).
//
// A Node never reads the wall clock except through its timesource.Source,
// and never applies anything that was not committed through the catalog.
// Close stops every goroutine the node started.
//
// A cluster member (package cluster) gives the node Config.Cluster (its
// catalog joins a raft cluster over TLS), Config.Forward (a statement on a
// follower commits through the leader, so its reply is the same wherever
// the session is), Config.Available and Config.AvailabilityChanged (the
// cluster's view merging raft heartbeats and health probes, and its change
// signal), and Config.OnProgress and Config.OnRetire (peer delivery); it
// reads the registry, the raft configuration and installed clocks, and
// changes membership, through the methods in membership.go, never through
// the catalog or the runtime registry themselves. A reassigned fence needs
// no special path here: every committed revision installs what it changed
// at once, in commit order, and a lifecycle from an older revision never
// replaces a newer one, so AdvertisedRevision is simply the newest counted
// revision.
//
// Every node owns one Prometheus registry (MetricsRegistry, built by
// metrics.NewRegistry) holding its per-domain gauges
// (nspl_domain_authority, nspl_domain_tick_lag_seconds, metrics.go); the
// cluster member and the session server around it register theirs into
// it, and MetricsHandler serves it with /livez and Ready as /readyz.
package node
