package node

import (
	"context"
	"errors"
	"sync"

	"github.com/nspl-dev/nspl/runtime"
)

// producerSet runs the node's tick producers: one per paced running domain
// whose installed authority is this process's incarnation. One goroutine
// reconciles the set with the registry after every installation, so a
// producer is always stopped and waited for before its successor starts.
type producerSet struct {
	n       *Node
	wakeC   chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	running map[string]*runtime.Producer // owned by the loop; mu for readers
	synced  chan struct{}                // closed and replaced after each sync; mu
}

func newProducerSet(n *Node) *producerSet {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &producerSet{
		n:       n,
		wakeC:   make(chan struct{}, 1),
		cancel:  cancel,
		done:    make(chan struct{}),
		running: make(map[string]*runtime.Producer),
		synced:  make(chan struct{}),
	}
	go ps.loop(ctx)
	return ps
}

// wake asks the loop to reconcile; it never blocks.
func (ps *producerSet) wake() {
	select {
	case ps.wakeC <- struct{}{}:
	default:
	}
}

// close stops the loop and every producer and waits for them.
func (ps *producerSet) close() {
	ps.cancel()
	<-ps.done
}

func (ps *producerSet) loop(ctx context.Context) {
	defer close(ps.done)
	defer ps.stopAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ps.wakeC:
			ps.sync()
			ps.mu.Lock()
			close(ps.synced)
			ps.synced = make(chan struct{})
			ps.mu.Unlock()
		}
	}
}

// sync retires every producer whose fence no longer matches the installed
// clock and then starts the missing ones.
func (ps *producerSet) sync() {
	reg := ps.n.registry
	self := ps.n.Identity()
	desired := make(map[string]runtime.ProducerFence)
	for _, name := range reg.Domains() {
		f, ok := runtime.FenceOf(reg.Current(name))
		if ok && f.Authority.Identity() == self {
			desired[name] = f
		}
	}
	for name, p := range ps.running {
		if f, ok := desired[name]; ok && f == p.Fence() {
			continue
		}
		p.Stop()
		ps.mu.Lock()
		delete(ps.running, name)
		ps.mu.Unlock()
		ps.n.logger.Info("retired tick producer", "domain", name, "generation", p.Fence().Generation,
			"authority", p.Fence().Authority.String(), "last_tick", p.LastTick())
	}
	for name, f := range desired {
		if _, ok := ps.running[name]; ok {
			continue
		}
		p := runtime.StartProducer(runtime.ProducerConfig{
			Fence:  f,
			Source: ps.n.src,
			Emit:   ps.n.emit,
			Logger: ps.n.logger,
		})
		ps.mu.Lock()
		ps.running[name] = p
		ps.mu.Unlock()
		ps.n.logger.Info("started tick producer", "domain", name, "generation", f.Generation,
			"authority", f.Authority.String())
	}
}

func (ps *producerSet) stopAll() {
	for name, p := range ps.running {
		p.Stop()
		ps.mu.Lock()
		delete(ps.running, name)
		ps.mu.Unlock()
	}
}

// fence returns the fence of the domain's running producer and a channel
// closed when the set next finishes reconciling.
func (ps *producerSet) fence(domain string) (runtime.ProducerFence, bool, <-chan struct{}) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.running[domain]
	if !ok {
		return runtime.ProducerFence{}, false, ps.synced
	}
	return p.Fence(), true, ps.synced
}

// emit applies a report of this node's producer locally and hands it to
// peer delivery.
func (n *Node) emit(rep runtime.ProgressReport) {
	if _, err := n.registry.AcceptProgress(n.cfg.Name, rep); err != nil {
		// A producer being retired can still emit under its old fence;
		// the receiver's refusal is the fence doing its job.
		if errors.Is(err, runtime.ErrProgressFence) || errors.Is(err, runtime.ErrClockUnavailable) {
			n.logger.Debug("own progress refused", "domain", rep.Domain, "tick", rep.ID, "err", err)
		} else {
			n.logger.Warn("own progress refused", "domain", rep.Domain, "tick", rep.ID, "err", err)
		}
	}
	if n.cfg.OnProgress != nil {
		n.cfg.OnProgress(rep)
	}
}

// Producing returns the fence of the domain's running tick producer on this
// node, and false when the node runs none for it. Producers follow
// installations asynchronously: right after an installation the previous
// producer may still be reported until it has been retired.
func (n *Node) Producing(domain string) (runtime.ProducerFence, bool) {
	f, ok, _ := n.producers.fence(domain)
	return f, ok
}
