// Package telmodel holds the pieces of earshot's telephone-band acoustic
// model build (cmd/telmodel, `make model`): G.711 renditions of 16 kHz
// speech made through earshot's own resampler and G.711 decoder, so that the
// adaptation data looks exactly like what the SIP and WebRTC doors and the
// pre-recorded path hand the decoder, and the conversion of PocketSphinx's
// 8-bit senone dump (sendump) back to the float mixture weights sphinxtrain
// reads; and the corpus manifest and feat.params readers that cmd/telmodel
// and bench/cmd/mllrbench share.
package telmodel
