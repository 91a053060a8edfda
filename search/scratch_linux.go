package search

import "syscall"

// newScratch maps size bytes (rounded up to whole huge pages) of zeroed
// memory and asks for transparent huge pages (MADV_HUGEPAGE: honoured when
// /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise";
// otherwise the pages are 4 KB, as from the heap). nil when the mapping
// fails: the caller allocates from the heap.
func newScratch(size int) *scratch {
	if size <= 0 {
		return nil
	}
	size = (size + hugePage - 1) &^ (hugePage - 1)
	// One huge page more, so that the used part starts on a huge page's
	// boundary (a mapping is only page-aligned).
	b, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	skip := 0
	if r := int(uintptrOf(b) % hugePage); r != 0 {
		skip = hugePage - r
	}
	used := b[skip : skip+size]
	_ = syscall.Madvise(used, syscall.MADV_HUGEPAGE)
	return &scratch{b: used, free: func() { _ = syscall.Munmap(b) }}
}

// newPlainScratch maps size bytes (rounded up to whole pages) of zeroed
// memory in ordinary pages, for memory kept long in pieces of any size
// (postcache.go), where huge pages would round each piece up to 2 MB. nil
// when the mapping fails.
func newPlainScratch(size int) *scratch {
	if size <= 0 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return &scratch{b: b, free: func() { _ = syscall.Munmap(b) }}
}
