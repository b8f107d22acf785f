"""Suppression comments: reading them (`comments`), applying them to a file's findings
and reporting those that suppress nothing (`apply`, `unused`: SL900), and writing new
ones for every current finding (`add_noqa`, `notebook_noqa`). This package file
imports nothing, so that importing one of its modules never drags in the others."""
