-- What a node acknowledged holding, for a rotation without a window (S5,
-- issue 17): provision keeps the provider accepting an earlier generation of
-- a pair's credential until every holder acknowledged the new one, and
-- "acknowledged" is read here, from the declarations as they were signed and
-- sent, never from what a command believes it sent.

/* Every sealed file in each node's newest acknowledged declaration. A blob is
   sealed once, to one holder, for one generation, so the blob alone says
   which generation the node applied. Newest acknowledged, not any: a node
   that applied a newer declaration holds what that one carries. */
create view assignment.acknowledged_sealed as
select d.node, d.serial, r.value->>'sealed' as sealed
  from (select distinct on (x.node) x.node, x.serial, x.envelope
          from assignment.declaration x where x.acknowledged_at is not null
         order by x.node, x.serial desc) d
  cross join lateral jsonb_array_elements(((convert_from(d.envelope, 'utf8')::jsonb)->>'body')::jsonb->'resources') r
 where r.value->>'kind' = 'secret';
comment on view assignment.acknowledged_sealed is 'The sealed blobs in each node''s newest acknowledged declaration: what it holds, as the mesh signed it.';

grant select on assignment.acknowledged_sealed to mesh_provision;
