package main

// helpText is what help and \? print in the shell: every statement with one
// example, then the shell's own commands.
const helpText = `Statements (end each with ;):
  CREATE PACED DOMAIN <name> WITH PERIOD <d> SKEW <d> [PLACEMENT <policy>];
      CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;
  CREATE UNPACED DOMAIN <name> [PLACEMENT <policy>];
      CREATE UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;
  CREATE DOMAIN <name> [PLACEMENT <policy>];      (short for UNPACED)
      CREATE DOMAIN scratch;
  USE <name>;                                     make <name> the active domain
      USE prod;
  ALTER DOMAIN SET PLACEMENT <policy>;            the active domain's default
      ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;
  START; | START AT NOW [TIME RATE <f>]; | START AT '<rfc3339>' [TIME RATE <f>];
      START AT '2030-01-01T00:00:00Z' TIME RATE 60;
  STOP;
      STOP;
  ATTACH DOMAIN CLOCK; / DETACH DOMAIN CLOCK;     follow the active domain's clock
      ATTACH DOMAIN CLOCK;
  LIST DOMAINS [LIKE '<pattern>'];                 every domain, or those matching ('%' any run, '_' one character)
      LIST DOMAINS LIKE 'web-%';
  DESCRIBE DOMAIN [<name>];
      DESCRIBE DOMAIN prod;
  DROP DOMAIN [IF EXISTS] <name>;
      DROP DOMAIN IF EXISTS scratch;
  SHOW CLUSTER STATUS [LIKE '<pattern>'];         nodes and each matching paced domain's authority
      SHOW CLUSTER STATUS LIKE 'web-%';
  CORDON NODE <node>; / UNCORDON NODE <node>;      give a node no new clock authority, or again
      CORDON NODE n3;
  DRAIN NODE <node>;                              cordon it and move its clocks to other nodes
      DRAIN NODE n3;
  BEGIN; ... COMMIT; | REVERT; (also ROLLBACK;)    a transaction on the active domain
      BEGIN; STOP; START AT NOW; COMMIT;
  SHOW TRANSACTIONS;                              this session's open transaction
      SHOW TRANSACTIONS;
  SHOW ALL TRANSACTIONS;                          every session's, on the serving node
      SHOW ALL TRANSACTIONS;
  DESCRIBE TRANSACTION;                           its queued steps, in order, and its limits
      DESCRIBE TRANSACTION;
  BACKUP CLUSTER TO '<path>'; | BACKUP DOMAIN [<name>] TO '<path>';
      BACKUP DOMAIN prod TO '~/prod.nsplbak';
  RESTORE CLUSTER FROM '<path>' [RESUME] [DRY RUN];
  RESTORE DOMAIN <name> [AS <new_name>] FROM '<path>' [RESUME] [DRY RUN];
      RESTORE DOMAIN prod AS rehearsal FROM '~/prod.nsplbak' RESUME;
  DESCRIBE BACKUP '<path>';                       verify and describe an archive
      DESCRIBE BACKUP '~/prod.nsplbak';

Placement policies: NEUTRAL, REQUIRE COLOCATION, PREFER COLOCATION, SUGGEST SEPARATION.
Durations: 1s, 250ms, 1h30m, 1.5s. Comments: -- and // to end of line, /* ... */.

Shell: help or \? (this text); exit, quit, \q or Ctrl-D leave; \i FILE runs a
script file; \timing [on|off] prints each statement's elapsed time; Ctrl-C clears
the line or cancels a running statement; Tab completes keywords and domain names.
\sleep DURATION waits; \wait tick N waits for tick N of the active domain's
attached clock (under --virtual-time both move the clock and print its frames).
Prompt: nspl[<domain>]> with an active domain, * before > while a transaction
is open, ...> while a statement continues.
`
