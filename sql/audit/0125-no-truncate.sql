-- C3: the history records each node retired, each broker removed and each
-- freeze window deleted from a row trigger on DELETE, and TRUNCATE fires no
-- row trigger: a context's role owns its tables and may truncate them, which
-- would remove those rows with no word in the history. A statement trigger
-- refuses it (MSH79); the guard keeps the trigger in force like the others
-- (audit.watched).
create function audit.refuse_truncate() returns trigger language plpgsql as $$
begin
  raise exception 'TRUNCATE on %.% refused: the history records each row removed from it, and a truncate removes rows with no word', tg_table_schema, tg_table_name
    using errcode = 'MSH79',
    hint = 'delete the rows instead (each delete is recorded); mesh node retire removes a node';
end $$;

create trigger audit_no_truncate before truncate on inventory.node for each statement execute function audit.refuse_truncate();
create trigger audit_no_truncate before truncate on inventory.broker for each statement execute function audit.refuse_truncate();
create trigger audit_no_truncate before truncate on assignment.freeze for each statement execute function audit.refuse_truncate();

-- Named as audit.trigger_problems names them (format %I: "freeze" is quoted).
insert into audit.watched (on_table, trigger)
select format('%I.%I', s, t), 'audit_no_truncate'
  from (values ('inventory', 'node'), ('inventory', 'broker'), ('assignment', 'freeze')) v (s, t);
