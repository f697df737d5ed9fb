-- W2 for a module's content: which nodes a new version of a module can
-- change. A module's resources reach a node's composition only where the
-- module is placed: its files, services and the rest on those nodes, and its
-- openings in those nodes' firewalls. Another module's opening "from
-- module:M" admits M's nodes by their placement, not M's content, so it does
-- not move. Composing these nodes alone, not the fleet, is what makes a change
-- to a module on 100 nodes of 100,000 cost 100 compositions.

/* The nodes placed with any of these modules: those a change to their content can affect (W2). */
create function assignment.affected_by_modules(module_names text[]) returns table (node text)
language sql stable as $$
  select distinct a.node from assignment.assignment a where a.module = any(module_names)
$$;
comment on function assignment.affected_by_modules(text[]) is 'The nodes a change to these modules'' content can affect: those they are placed on (W2).';
