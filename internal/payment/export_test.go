package payment

// KeptStatements says, for Get and GetWithHistory alike, whether they run a kept statement in a
// merchant's scope and in the system's.
func KeptStatements(s *Service) (merchant, system bool) {
	kept := func(kind int) bool {
		plain, history := s.byID.kept[kind].Load(), s.byIDWithHistory.kept[kind].Load()
		return plain != nil && plain.statement != nil && history != nil && history.statement != nil
	}
	return kept(merchantScope), kept(systemScope)
}
