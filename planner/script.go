package planner

import "context"

// RunScript plans every statement of text and runs each through exec in
// order: it stops at the first error and returns the results before it,
// and a syntax error is returned after the statements before it have run.
// A session, the remote client and the embedded API run statement text
// through it, so the three stop at the same statement.
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
