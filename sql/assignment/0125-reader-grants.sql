-- assignment.firewall_opening reads provision's grants, and the assignment
-- reader (the console's) has no right on provision, by design (P1): it
-- could never read the view, so it is not granted it. `mesh firewall show`
-- gives the same answer.
revoke select on assignment.firewall_opening from mesh_assignment_reader;
