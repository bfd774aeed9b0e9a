"""The default domain: any document, read for what it says, with no identity but its title."""
