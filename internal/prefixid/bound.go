package prefixid

// MaxLength bounds an id a client sends (in a path, a list's starting_after, a field naming a
// resource): the ids Paygate makes are a short prefix, _ and Length characters (26 for those made
// before), so a longer one names nothing and is refused before it is looked up.
const MaxLength = 255
