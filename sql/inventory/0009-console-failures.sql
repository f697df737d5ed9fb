-- The console (issue 21) shows each node's failing resources from
-- inventory.apply_failure (0008), which 0005's triggers do not watch: a
-- failure arriving, changing or cleared must tell the console too, on the
-- same channel, or the fleet page would learn of it only at its next
-- periodic re-read. A host that reports the same failure again at each
-- reconcile changes nothing shown, and says nothing.

create trigger apply_failure_changed after insert or delete on inventory.apply_failure
  for each row execute function inventory.notify_console();
create trigger apply_failure_updated after update on inventory.apply_failure
  for each row when (old.serial is distinct from new.serial or old.failed is distinct from new.failed)
  execute function inventory.notify_console();
