import 'package:flutter/material.dart';
import 'package:offer_sdk/offer_sdk.dart';

/// Spring sale: a headline, the pack's art and name, and its purchase button.
class SpringSalePage extends StatelessWidget {
  const SpringSalePage({super.key, required this.offer});

  final OfferData offer;

  @override
  Widget build(BuildContext context) {
    final title = offer['title'] as String;
    return Scaffold(
      backgroundColor: const Color(0xFF1B1035),
      body: SafeArea(
        child: Padding(
          padding: const EdgeInsets.symmetric(horizontal: 24, vertical: 24),
          child: Column(
            mainAxisAlignment: MainAxisAlignment.center,
            crossAxisAlignment: CrossAxisAlignment.center,
            children: [
              Text(
                title.toUpperCase(),
                textAlign: TextAlign.center,
                style: TextStyle(fontSize: 34, fontWeight: FontWeight.bold, color: Colors.amber),
              ),
              const SizedBox(height: 24),
              Text('${offer['discount']}% off today only', style: TextStyle(fontSize: 18, color: Colors.white70)),
              const SizedBox(height: 24),
              Expanded(
                child: Image(item: offer.items[0], fit: BoxFit.contain),
              ),
              const SizedBox(height: 24),
              Container(
                padding: EdgeInsets.all(12),
                decoration: BoxDecoration(
                  color: Colors.white12,
                  borderRadius: BorderRadius.circular(16),
                ),
                child: Row(
                  mainAxisAlignment: MainAxisAlignment.spaceBetween,
                  children: [
                    Text(offer.items[0].name, style: TextStyle(fontSize: 20, color: Colors.white)),
                    Text('x${offer.items[0].amount}', style: TextStyle(fontSize: 20, color: Colors.amberAccent, fontWeight: FontWeight.w700)),
                  ],
                ),
              ),
              const SizedBox(height: 32),
              OfferButton(
                item: offer.items[0],
                color: Colors.green,
                textColor: Colors.white,
                height: 56,
              ),
            ],
          ),
        ),
      ),
    );
  }
}
