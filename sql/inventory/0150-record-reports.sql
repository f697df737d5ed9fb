-- Reports recorded many at a time (R1, R2, R3). After a declaration every
-- node reports at once, and a report recorded alone cost serve several round
-- trips and a commit of its own. Serve hands over every report that arrived
-- while the batch before it was written, each as the JSON text of one entry:
-- each entry is read and recorded in a subtransaction of its own, so one the
-- store refuses (a hostile node's bad bytes, a version that is not one) fails
-- alone, with its SQLSTATE and message in its row, and every other is kept.
-- The steps are those one report always took, in the same order; the entry's
-- fields are src/inventory/reports.ts's ReportEntry.
create function inventory.record_reports(entries text[])
returns table (ordinal integer, first_delivery boolean, times integer, upgraded boolean, resync boolean,
               error_code text, error_message text)
language plpgsql as $$
declare
  e jsonb;
  node_name text;
  i integer;
begin
  for i in 1 .. coalesce(array_length(entries, 1), 0) loop
    ordinal := i;
    first_delivery := true; times := 0; upgraded := false; resync := false; error_code := null; error_message := null;
    begin
      e := entries[i]::jsonb;
      node_name := e->>'node';
      -- Once per message: "seen" commits with what the report records, so a redelivery records nothing twice.
      if e->>'message_id' is not null then
        -- The receipt names the refused declaration's serial, else the report's.
        first_delivery := inventory.receive_report(node_name, e->>'message_id',
          case when jsonb_typeof(e->'refused') = 'object' then (e->'refused'->>'serial')::bigint else (e->>'serial')::bigint end);
      end if;
      if not first_delivery then
        perform inventory.mark_heard(node_name);
      else
        -- Every report's, a refusal's and a failure's too: the version of an agent that refuses is the one most worth knowing.
        if e->>'agent' is not null then
          upgraded := inventory.record_agent_version(node_name, e->>'agent');
        end if;
        if jsonb_typeof(e->'refused') = 'object' then
          times := inventory.record_refusal(node_name, (e->'refused'->>'serial')::bigint,
                                            e->'refused'->>'fault', e->'refused'->>'reason');
        else
          if jsonb_typeof(e->'packages') = 'object' then
            resync := inventory.record_packages(node_name, e->'packages') = 'resync';
          end if;
          -- Nothing for a report without corrections: the report path is the busiest write.
          if jsonb_array_length(e->'corrected') > 0 then
            perform inventory.record_corrections(node_name, array(select jsonb_array_elements_text(e->'corrected')));
          end if;
          if jsonb_array_length(e->'failed') > 0 then
            perform inventory.record_failure(node_name, (e->>'serial')::bigint, e->'failed');
          else
            perform inventory.record_report(node_name, (e->>'serial')::bigint, e->'held', '[]'::jsonb,
                                            to_timestamp((e->>'holds_until')::double precision));
          end if;
        end if;
      end if;
    exception when others then
      get stacked diagnostics error_code = returned_sqlstate, error_message = message_text;
      first_delivery := null; times := null; upgraded := null; resync := null;
    end;
    return next;
  end loop;
end $$;

comment on function inventory.record_reports(text[]) is
  'Records each report entry (JSON text) in a subtransaction of its own: a row per entry, in order, with its SQLSTATE and message where the store refused it and nothing of it was kept.';
