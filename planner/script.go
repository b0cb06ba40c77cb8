package planner

import "context"

// RunScript plans every statement of text and runs each through exec in
// order: it stops at the first error and returns the results before it,
// and a syntax error is returned after the statements before it have run.
// A session and the embedded API run statement text through it; the remote
// client, which parses nothing it sends, runs the statements of a
// grammar.Split in the same order with the same stop, and sends the rest a
// split cannot cut for the server to refuse as Parse does here.
func RunScript[R any](ctx context.Context, text string, exec func(context.Context, Plan) (R, error)) ([]R, error) {
	plans, planErr := PlanScript(text)
	results := make([]R, 0, len(plans))
	for _, p := range plans {
		r, err := exec(ctx, p)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	if planErr != nil {
		return results, planErr
	}
	return results, nil
}
