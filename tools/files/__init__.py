"""How the file tools reach files: confined to the workspace by descriptor, never through a link that moved."""
