-- A declare's targets are looked up by name. declarable's one filter,
-- `node_names is null or name = any(node_names)`, read every enrolled node
-- to find the hundred a module change names (0.23 s at 100,000 nodes): its
-- argument is a subquery, so PostgreSQL does not inline it, and the generic
-- plan of an OR cannot use the key. Two branches: all, or the names.
create or replace function assignment.declarable(node_names text[]) returns table (node text) language sql stable as $$
  select * from (select name from inventory.enrolled_node where node_names is null
                 union all
                 select name from inventory.enrolled_node where name = any(node_names)) d
   order by 1
$$;
